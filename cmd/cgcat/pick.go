package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/server"
)

// picked is the one project a name or id stands for (path, show,
// resolve by name), or the candidates when it is not sure which.
type picked struct {
	env        *server.Envelope // the answer the project came from
	project    *server.Project  // nil: not sure (see candidates)
	candidates []server.Project
}

// maxCandidates is how many candidates a name that is not sure shows.
const maxCandidates = 10

// pickProject finds the project a person means by words: a project id
// resolves as `cgcat resolve` does; otherwise the words are searched, as
// `cgcat projects` searches them, and a project is picked only when it is
// sure:
//   - exactly one project is named by the words (its name, a package name,
//     its unscoped form or last path element, or its directory's name,
//     once case and separators are set aside), or
//   - the search found exactly one project.
//
// Two clones of one package, or a word that only appears in descriptions,
// leave the choice to the person (the candidates, best first).
func pickProject(ctx context.Context, g *globalOptions, words, ws string, errOut io.Writer) (*picked, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	warnSetUp(errOut, g, cfg)
	if !cfg.HasRoots() {
		return nil, errNotSetUp(g)
	}
	f := newCLIFrontend(config.Fixed(cfg), errOut)
	if ids.ValidProjectID(words) {
		e, err := f.Resolve(ctx, server.ResolveArgs{ProjectID: words})
		if err != nil {
			return nil, err
		}
		if e.Status != server.StatusOK || len(e.Projects) == 0 {
			return &picked{env: e}, nil
		}
		return &picked{env: e, project: &e.Projects[0]}, nil
	}
	if err := f.Ready(ctx); err != nil {
		return nil, err
	}
	if f.Catalog().State().LastCompleted.IsZero() {
		primeMirror(ctx, cfg, f.parts(), newLogger(errOut), errOut)
		if err := scanToCompletion(ctx, cfg, f.parts().st, errOut); err != nil {
			return nil, err
		}
	}
	e, err := f.Projects(ctx, server.ProjectsArgs{Query: words, Limit: maxCandidates, WorkspacePath: ws})
	if err != nil {
		return nil, err
	}
	pk := &picked{env: e, candidates: e.Projects}
	if e.Status != server.StatusOK {
		return pk, nil
	}
	var named []int
	for i, p := range e.Projects {
		if names(p, words) {
			named = append(named, i)
		}
	}
	switch {
	case len(named) == 1:
		pk.project = &e.Projects[named[0]]
	case len(named) == 0 && e.Total == 1 && len(e.Projects) == 1:
		pk.project = &e.Projects[0]
	}
	return pk, nil
}

// names reports whether words name p: its name, a package name, a
// package's unscoped form or last path element, or its directory's name,
// compared without case and separators.
func names(p server.Project, words string) bool {
	want := squash(words)
	if want == "" {
		return false
	}
	for _, f := range nameForms(p) {
		if squash(f) == want {
			return true
		}
	}
	return false
}

// squash keeps the letters and digits of s, lowercased.
func squash(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// notPicked is the error of a name that stands for no one project: what
// happened, in the CLI's words, with the candidates (short lines) on
// errOut. Exit status 1: not sure (or nothing matched); 3 for an id that
// does not resolve, as `cgcat resolve` says.
func notPicked(pk *picked, words string, t termOut, errOut io.Writer) error {
	e := pk.env
	switch {
	case e.Status == server.StatusSetupRequired:
		return &exitError{code: exitFailure, err: fmt.Errorf("%s", e.Message)}
	case ids.ValidProjectID(words):
		return &exitError{code: exitNotFound, err: fmt.Errorf("%s: %s. %s", words, e.Status, e.Message)}
	case e.Status == server.StatusNoMatches:
		writeNotes(errOut, e, words, t)
		return &exitError{code: exitFailure}
	case e.Status != server.StatusOK:
		return &exitError{code: exitFailure, err: fmt.Errorf("%s: %s", e.Status, e.Message)}
	}
	n := e.Total
	fmt.Fprintf(errOut, "cgcat: %s names no single project; %d match, best first (name one, or its id):\n", quoted(words), n)
	_ = writeShort(errOut, t, pk.candidates)
	if n > len(pk.candidates) {
		fmt.Fprintf(errOut, "… and %d more: cgcat projects %s\n", n-len(pk.candidates), shellWord(words))
	}
	return &exitError{code: exitFailure}
}
