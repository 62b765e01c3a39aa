package meta

// The words people use for a project's language and ecosystem ("python",
// "typescript", "golang"), derived from which manifest declares it: a
// manifest's output carries them first among its keywords, so search
// finds a project by them and a manifest with many keywords of its own
// cannot push them out of the bound. They are a derivation: a change of
// these lists changes what the readers derive (the metadata readers'
// version covers them).
var (
	langJavaScript = []string{"javascript", "nodejs"}
	langTypeScript = []string{"typescript"}
	langPHP        = []string{"php", "composer"}
	langRust       = []string{"rust", "cargo"}
	langPython     = []string{"python"}
	langGo         = []string{"go", "golang"}
	langJava       = []string{"java", "jvm"}
	langKotlin     = []string{"kotlin"}
	langRuby       = []string{"ruby", "rubygems"}
	langDart       = []string{"dart"}
	langFlutter    = []string{"flutter"}
	langCSharp     = []string{"csharp", "dotnet"}
)

// withLanguage puts the language words before the manifest's own
// keywords (once each: addList drops repeats when the lists merge).
func withLanguage(m manifest, words []string) manifest {
	m.keywords = append(append([]string(nil), words...), m.keywords...)
	return m
}
