package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/derived"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// Views checks the published catalog end to end (view.Verify: the pointer,
// the base's checksum and bounds, every record, every delta after it, and
// damage readers reported), and that it holds what the store holds.
// Readers work around damage on their own (the previous base, or the store
// itself), so damage here slows readers and is repaired by the next write;
// doctor names it so a person knows what happened.
func Views(ctx context.Context, dataDir string) []Check {
	start := time.Now()
	r := view.Verify(dataDir)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case r.Unpublished && !exists(store.DBDir(dataDir)):
		return []Check{Infof("nothing published yet (no catalog store)")}
	case r.Outdated:
		return []Check{Warnf("restart the hosts (or their cgcat servers) so every process runs the newest cgcat; this one answers from the store meanwhile",
			"the catalog was published by a newer cgcat than this one (%s)", version(r))}
	case len(r.Problems) > 0:
		damage := strings.Join(r.Problems, "; ")
		// Reported as any reader does, opening the store publishes the
		// catalog whole again (when no other process holds the store).
		if r.Pointer.StoreID != "" {
			view.ReportDamage(dataDir, r.Pointer, errors.New(damage))
		}
		if _, err := store.Open(ctx, dataDir); err == nil {
			if again := view.Verify(dataDir); len(again.Problems) == 0 {
				return []Check{Warnf("nothing more to do; if it happens again, look for what else writes into the data dir (a backup restore, a sync tool)",
					"published catalog was damaged (%s, found in %s); published whole again from the store just now (%d records)", p(damage), took, again.Records)}
			}
		}
		return []Check{Failf("run `cgcat scan` (any command that writes publishes it whole again); meanwhile readers answer from the previous base or the store itself",
			"published catalog is damaged: %s", p(damage))}
	}
	ok := Okf("published catalog verified end to end: %d records, base %d and %d changes after it (%s)", r.Records, r.Pointer.Base, r.Deltas, took)
	ok.Notes = append(ok.Notes, "derived by this cgcat's "+derived.Summary())
	cs := []Check{ok}
	vs, err := store.Handle(dataDir).ReadCatalog(ctx)
	switch {
	case err != nil:
	case vs.StoreID != r.Pointer.StoreID:
		cs = append(cs, Failf("run `cgcat scan` to publish it again", "the published catalog is of another store (%s) than the database (%s)", p(r.Pointer.StoreID), p(vs.StoreID)))
	case vs.Revision == r.Pointer.Revision && len(vs.Records) != r.Records:
		cs = append(cs, Failf("run `cgcat scan` to publish it again", "the published catalog holds %d records, the store %d at the same revision", r.Records, len(vs.Records)))
	}
	return cs
}

func version(r view.Report) string {
	if len(r.Problems) > 0 {
		return r.Problems[0]
	}
	return fmt.Sprintf("format above %d", view.Format)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
