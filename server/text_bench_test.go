package server

import (
	"fmt"
	"testing"
)

// benchEnvelope is an answer of n projects like the load benchmark's: a
// description with CJK, a package, a version, and look-alikes in groups
// of seven (clones of one repository).
func benchEnvelope(n int) *Envelope {
	e := &Envelope{SchemaVersion: SchemaVersion, Status: StatusOK, MachineID: "m_pmcm4t2owxneae4j", CatalogRevision: 42, ScanState: "idle", Coverage: "complete", GBrainState: GBrainDisabled}
	for i := range n {
		path := fmt.Sprintf("/home/dev/code/c%04d/work/admin-console", i)
		p := Project{ProjectID: fmt.Sprintf("cg_v7rbarda4ifk%05d", i), RecordRevision: 3, Name: "admin-console",
			Description: "运营后台管理系统前端，基于 React，包含商品管理、订单审核和权限配置 (admin \"console\")",
			Reason:      []string{`description mentions "react"`}, ProjectPath: &path, Availability: "present", IndexState: "marker_present",
			Freshness: "unknown", ValidatedAt: "2026-12-02T02:11:52Z", RevalidateAfterSeconds: RevalidateAfter,
			Handoff:  &Handoff{MCPServerHint: "codegraph", ToolName: "codegraph_explore", Arguments: map[string]string{"projectPath": path}, RequiredFromAgent: []string{"query"}},
			Packages: []string{"admin-console", "@acme/admin"}, Version: "1.0.0", Branch: "main", Commit: "0123456789abcdef"}
		e.Projects = append(e.Projects, p)
	}
	for i := range e.Projects {
		g := i / 7 * 7
		l := &Lookalike{DiffersBy: []string{"branch"}}
		for j := g; j < min(g+7, n); j++ {
			if j != i {
				l.Of = append(l.Of, e.Projects[j].ProjectID)
			}
		}
		e.Projects[i].Lookalike = l
	}
	cursor := "eyJzIjoiYzVmaHZpbC1vZ1ViQU1pXyIsIm8iOjIsImIiOjExMDI2NzM0NTIxMDEyMDg4MzU4fQ.9v7UKU01NVPmT0LUEFM3mm14"
	e.NextCursor = &cursor
	return e
}

// BenchmarkText: the text content of a page of 50 (every call renders it).
func BenchmarkText(b *testing.B) {
	e := benchEnvelope(50)
	b.ReportAllocs()
	for b.Loop() {
		_ = Text(e)
	}
}
