package doctor

import (
	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// promptChecks says whether the host will ask before running cgcat's tools
// (and CodeGraph's explore), from the rules that host really applies, or
// that it could not tell (each host's Approval).
func promptChecks(in HostInput, src []byte, servers []hostconfig.Server, ours hostconfig.Server, readOnly bool) []Check {
	cg := hostconfig.DefaultCodeGraphServer
	if s, ok := hostconfig.FindCodeGraph(servers); ok {
		cg = s.Name
	}
	return fromFindings(in.Host.Approval(hostconfig.ApprovalInput{
		Env: in.Env, File: in.File, Src: src, Servers: servers, Ours: ours,
		Name: in.Name, CodeGraph: cg, AllowFile: in.AllowFile, ReadOnly: readOnly,
	}))
}

// fromFindings turns what a host's config says into report lines; every
// name or path in them is made printable.
func fromFindings(fs []hostconfig.Finding) []Check {
	out := make([]Check, 0, len(fs))
	for _, f := range fs {
		c := Check{Status: Status(f.Level), What: p(f.What), Fix: p(f.Fix), Code: f.Code}
		out = append(out, c)
	}
	return out
}
