// Command gencat makes catalogs for the stdio benchmarks in bench/*.sh.
//
//	gencat -dir DIR -n 100000   synthetic: n projects (the query set's real
//	                            metadata repeated under varied names, see
//	                            bench/selection.Synthetic), each a project
//	                            directory holding only its marker, with its
//	                            record written straight into DIR/data
//	gencat -dir DIR -copies 14  a real tree: the query-set catalog written
//	                            14 times with its files, for `cgcat scan`
//	gencat -dir DIR -empty      a root with nothing in it
//
// Both write DIR/config.json (roots DIR/code, data dir DIR/data) and
// DIR/.complete; a DIR that is complete with the same arguments is kept.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/cgcat/cgcat/bench/selection"
	"github.com/cgcat/cgcat/local/config"
)

func main() {
	dir := flag.String("dir", "", "output directory")
	n := flag.Int("n", 0, "synthetic projects (records written straight into the store)")
	copies := flag.Int("copies", 0, "copies of the query-set catalog as a real tree (to be scanned)")
	depth := flag.Int("depth", -1, "discovery.maxDepth (default: 0 for -n, whose directories hold no metadata files and must not be re-read; 6 for -copies)")
	refresh := flag.Int("refresh", 600, "discovery.refreshIntervalSeconds")
	empty := flag.Bool("empty", false, "an empty root")
	data := flag.String("data", "testdata/selection", "the query-set directory")
	flag.Parse()
	kinds := 0
	for _, b := range []bool{*n > 0, *copies > 0, *empty} {
		if b {
			kinds++
		}
	}
	if *dir == "" || kinds != 1 {
		log.Fatal("usage: gencat -dir DIR (-n N | -copies K | -empty) [-depth D] [-refresh S]")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	if *depth < 0 {
		*depth = 6
		if *n > 0 {
			*depth = 0
		}
	}
	stamp := fmt.Sprintf("n=%d copies=%d empty=%v depth=%d refresh=%d\n", *n, *copies, *empty, *depth, *refresh)
	if b, err := os.ReadFile(filepath.Join(abs, ".complete")); err == nil && string(b) == stamp {
		fmt.Fprintf(os.Stderr, "gencat: %s is ready (%s)\n", abs, stamp[:len(stamp)-1])
		return
	}
	if err := os.RemoveAll(abs); err != nil {
		log.Fatal(err)
	}
	code, dataDir := filepath.Join(abs, "code"), filepath.Join(abs, "data")
	if err := os.MkdirAll(code, 0o755); err != nil {
		log.Fatal(err)
	}
	recs, err := selection.LoadCatalog(*data)
	if err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	if *n > 0 {
		tmp, err := os.MkdirTemp("", "gencat-base-")
		if err != nil {
			log.Fatal(err)
		}
		base, err := selection.ReadBase(tmp, recs)
		os.RemoveAll(tmp)
		if err != nil {
			log.Fatal(err)
		}
		if err := selection.WriteSynthetic(context.Background(), base, *n, code, dataDir); err != nil {
			log.Fatal(err)
		}
	} else if *copies > 0 {
		for k := range *copies {
			if err := selection.Materialise(filepath.Join(code, fmt.Sprintf("c%04d", k)), recs); err != nil {
				log.Fatal(err)
			}
		}
	}
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Discovery.Roots = []string{code}
	cfg.Discovery.MaxDepth = *depth
	cfg.Discovery.RefreshIntervalSeconds = *refresh
	b, err := config.Marshal(&cfg)
	if err != nil {
		log.Fatal(err)
	}
	cfgPath := filepath.Join(abs, "config.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		log.Fatal(err)
	}
	if _, err := config.Load(cfgPath); err != nil {
		log.Fatalf("the written config does not load: %v", err)
	}
	if err := os.WriteFile(filepath.Join(abs, ".complete"), []byte(stamp), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "gencat: wrote %s in %s (%s)\n", abs, time.Since(t0).Round(time.Millisecond), stamp[:len(stamp)-1])
}
