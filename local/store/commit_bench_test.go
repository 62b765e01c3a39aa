package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
)

// BenchmarkCommitOneRecord: a commit of one record and its publication (a
// delta, the pointer), as every writer pays it.
func BenchmarkCommitOneRecord(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.Update(context.Background(), func(tx *Tx) error {
			return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/p%d", i), RecordRevision: 1})
		}); err != nil {
			b.Fatal(err)
		}
	}
}
