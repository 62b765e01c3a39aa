package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTxScanSeesStagedWrites holds Tx.scan to a simple model: random puts
// and deletes, some committed before the Tx and some staged in it, and
// after each step every prefix scan gives exactly the model's keys under
// that prefix, in order, with their values. Seed printed on failure.
func TestTxScanSeesStagedWrites(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	model := map[string]string{}
	key := func() string {
		return fmt.Sprintf("zt/%c/%c%d", 'a'+rune(rng.IntN(3)), 'a'+rune(rng.IntN(3)), rng.IntN(20))
	}
	step := func(tx *Tx) {
		k := key()
		if rng.IntN(3) == 0 {
			tx.del(k)
			delete(model, k)
			return
		}
		v := fmt.Sprint(rng.Uint32())
		tx.put(k, []byte(v))
		model[k] = v
	}
	for round := range 4 {
		if err := s.Update(ctx, func(tx *Tx) error {
			for i := range 60 {
				step(tx)
				for _, prefix := range []string{"zt/", "zt/a/", "zt/b/b", "zt/c/a1", "zu/"} {
					var got []string
					if err := tx.scan(prefix, func(k string, v []byte) bool {
						got = append(got, k+"="+string(v))
						return true
					}); err != nil {
						return err
					}
					var keys, want []string
					for k := range model {
						if strings.HasPrefix(k, prefix) {
							keys = append(keys, k)
						}
					}
					slices.Sort(keys)
					for _, k := range keys {
						want = append(want, k+"="+model[k])
					}
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d, round %d, step %d, prefix %q:\n got  %q\n want %q", seed, round, i, prefix, got, want)
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkTxScanManyStaged: a Tx that stages a record's keys and then asks
// for one prefix, thousands of times over (what a scan slice of new
// projects does): linear in the staged keys per scan, not quadratic.
func BenchmarkTxScanManyStaged(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = s.Update(context.Background(), func(tx *Tx) error {
			for i := range 2000 {
				for j := range 5 {
					tx.put(fmt.Sprintf("zb/%d/%05d", j, i), []byte("v"))
				}
				_ = tx.scan(fmt.Sprintf("zb/9/%05d/", i), func(string, []byte) bool { return true })
			}
			return nil
		})
	}
}
