// Command crosscheck type-checks every package of the module, its tests
// included, for each platform cgcat is released for, from source and all
// platforms at once: what a cross build would refuse to compile (a file
// for one OS that no longer fits the rest), without compiling the standard
// library and every dependency once per platform (make cross took 70-230 s
// a platform that way). It links nothing: `make dist` builds the binaries.
//
// It owns only this check. It never writes a file and never changes the
// module.
//
// Usage: go run ./internal/crosscheck [-p os/arch,...] [packages]
// (default: the Makefile's platforms, ./...).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

func main() {
	platforms := flag.String("p", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64", "comma-separated GOOS/GOARCH pairs")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	start := time.Now()
	var wg sync.WaitGroup
	list := strings.Split(*platforms, ",")
	results := make([]result, len(list))
	for i, p := range list {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "crosscheck: platform %q is not GOOS/GOARCH\n", p)
			os.Exit(2)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = check(goos, goarch, patterns)
		}()
	}
	wg.Wait()
	failed := false
	for _, r := range results {
		switch {
		case r.err != nil:
			failed = true
			fmt.Printf("✗ %s/%s: %v\n", r.goos, r.goarch, r.err)
		case len(r.problems) > 0:
			failed = true
			fmt.Printf("✗ %s/%s: %d problem(s) in %d packages:\n", r.goos, r.goarch, len(r.problems), r.packages)
			for _, e := range r.problems {
				fmt.Println("    " + e)
			}
		default:
			fmt.Printf("✓ %s/%s: %d packages type-check (%s)\n", r.goos, r.goarch, r.packages, r.took.Round(100*time.Millisecond))
		}
	}
	fmt.Printf("crosscheck: %d platforms in %s\n", len(results), time.Since(start).Round(100*time.Millisecond))
	if failed {
		os.Exit(1)
	}
}

type result struct {
	goos, goarch string
	packages     int
	problems     []string
	err          error
	took         time.Duration
}

// listed is the part of `go list -json` this check reads.
type listed struct {
	ImportPath string
	Dir        string
	Standard   bool
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	ForTest    string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

// check lists the packages and their dependencies as the go command sees
// them on goos/goarch (tests included; dependencies come first), then
// type-checks each in that order, importing the ones checked before it.
func check(goos, goarch string, patterns []string) result {
	r := result{goos: goos, goarch: goarch}
	start := time.Now()
	pkgs, err := list(goos, goarch, patterns)
	if err != nil {
		r.err = err
		return r
	}
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	sizes := types.SizesFor("gc", goarch)
	seen := map[string]bool{}
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		if p.Error != nil {
			r.problems = append(r.problems, p.ImportPath+": "+p.Error.Err)
			continue
		}
		if strings.HasSuffix(p.ImportPath, ".test") {
			continue // the generated test main
		}
		var files []*ast.File
		for _, name := range append(append([]string(nil), p.GoFiles...), p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				r.problems = append(r.problems, err.Error())
				continue
			}
			files = append(files, f)
		}
		var errs []string
		conf := types.Config{
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if m, ok := p.ImportMap[path]; ok {
					path = m
				}
				if pkg, ok := done[path]; ok {
					return pkg, nil
				}
				return nil, fmt.Errorf("%s is not checked before %s", path, p.ImportPath)
			}),
			Sizes:            sizes,
			FakeImportC:      true,
			IgnoreFuncBodies: p.Standard, // Go's own release checks it
			Error: func(err error) {
				if len(errs) < 10 {
					errs = append(errs, err.Error())
				}
			},
		}
		if p.Module != nil && p.Module.GoVersion != "" {
			conf.GoVersion = "go" + p.Module.GoVersion
		}
		pkg, _ := conf.Check(strings.TrimSuffix(p.ImportPath, " ["+p.ForTest+".test]"), fset, files, nil)
		if p.Standard && len(errs) > 0 {
			errs = []string{fmt.Sprintf("%s (standard library): %s", p.ImportPath, errs[0])}
		}
		for _, e := range errs {
			// A package is checked again as its tests' variant: say it once.
			if !seen[e] {
				seen[e] = true
				r.problems = append(r.problems, e)
			}
		}
		done[p.ImportPath] = pkg
		r.packages++
	}
	r.took = time.Since(start)
	return r
}

// list runs `go list -deps -test -json` for goos/goarch.
func list(goos, goarch string, patterns []string) ([]*listed, error) {
	args := append([]string{"list", "-e", "-deps", "-test", "-json=ImportPath,Dir,Standard,GoFiles,CgoFiles,ImportMap,ForTest,Module,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []*listed
	for {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
