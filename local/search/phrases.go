package search

import "strings"

// Phrases people search by. A query that holds one of these phrases, as
// neighbouring words ("machine learning"), also matches — in every field,
// as the whole phrase — a document that writes it as one word
// (machinelearning, machine-learning's joined form, MachineLearning) or
// by its usual short form (ml). The short form only ever stands for the
// phrase here: a query "ml" is the word ml, nothing more, since a
// document that says "machine" somewhere and "learning" elsewhere is no
// evidence of it. Read at query time only: nothing indexed depends on it.
var phrases = map[string][]string{
	"machine learning":                  {"ml"},
	"deep learning":                     {"dl"},
	"artificial intelligence":           {"ai"},
	"natural language processing":       {"nlp"},
	"large language model":              {"llm"},
	"large language models":             {"llm", "llms"},
	"reinforcement learning":            {"rl"},
	"command line":                      {"cli"},
	"command line interface":            {"cli"},
	"user interface":                    {"ui"},
	"continuous integration":            {"ci"},
	"object relational mapping":         {"orm"},
	"single sign on":                    {"sso"},
	"infrastructure as code":            {"iac"},
	"key value":                         {"kv"},
	"kubernetes":                        {"k8s"},
	"internationalization":              {"i18n"},
	"javascript":                        {"js"},
	"typescript":                        {"ts"},
	"golang":                            {"go"},
	"dotnet":                            {"csharp"},
	"application programming interface": {"api"},
}

// maxPhraseWords is the longest phrase above, in words.
const maxPhraseWords = 4

// maxPhraseTerms bounds the alternatives one query adds.
const maxPhraseTerms = 8

// addPhrases adds, for each run of the query's one-word groups that is a
// known phrase, its joined form and its short forms as alternatives that
// credit every word of the run.
func (q *query) addPhrases() {
	n := len(q.groups)
	for i := 0; i < n && len(q.phrases) < maxPhraseTerms; i++ {
		for k := min(maxPhraseWords, n-i); k >= 1; k-- {
			words := make([]string, 0, k)
			var bits uint64
			for _, g := range q.groups[i : i+k] {
				words = append(words, g.raw)
				bits |= g.members
			}
			alts, ok := phrases[strings.Join(words, " ")]
			if !ok {
				continue
			}
			if k > 1 {
				alts = append([]string{strings.Join(words, "")}, alts...)
			}
			for _, a := range alts {
				if len(q.phrases) < maxPhraseTerms {
					q.phrases = append(q.phrases, pairTerm{string(stem([]byte(a))), bits})
				}
			}
			break
		}
	}
}
