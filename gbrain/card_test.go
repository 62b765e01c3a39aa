package gbrain

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sampleCard() Card {
	return Card{
		ProjectID:      "p-7f3a9c",
		MachineID:      "m-42b1",
		Name:           "Acme Payments SDK",
		Description:    "Go client for the Acme payments API: charges, refunds and \"webhooks\".\n\tSecond line.",
		Tags:           []string{"Payments", "sdk", "payments"},
		Packages:       []string{"github.com/acme/payments-go", "@acme/payments"},
		Keywords:       []string{"billing", "#hash", "billing"},
		RecordRevision: 7,
		RootKey:        "5d1c0f3a9b7e24681f0e3d2c4b5a6978",
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gbrain -run Golden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestEncodeGolden(t *testing.T) {
	ref, err := Encode(sampleCard(), EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "card_reference_only.md", ref)

	c := sampleCard()
	c.Name = "支付 SDK (Acme)"
	c.Path = "/home/dev/code/acme payments/支付"
	lp, err := Encode(c, EncodeOptions{Projection: ProjectionLocalPaths})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "card_local_paths.md", lp)

	min, err := Encode(Card{ProjectID: "p1", MachineID: "m1", Name: "tiny"}, EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "card_minimal.md", min)
}

func TestEncodeNeverWritesIDOrPath(t *testing.T) {
	s, err := Encode(sampleCard(), EncodeOptions{Projection: ProjectionReferenceOnly})
	if err != nil {
		t.Fatal(err)
	}
	fm, _, err := splitFrontmatter(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range fm {
		if strings.HasPrefix(l, "id:") || strings.HasPrefix(l, "path:") {
			t.Errorf("frontmatter line %q", l)
		}
	}
	if strings.Contains(s, "/home/") {
		t.Error("reference-only card mentions a path")
	}
	for _, word := range []string{"Acme Payments SDK", "refunds", "@acme/payments", "billing", "payments"} {
		if !strings.Contains(s[strings.Index(s, "\n---\n"):], word) {
			t.Errorf("body lacks searchable word %q", word)
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, proj := range []string{"", ProjectionReferenceOnly, ProjectionLocalPaths} {
		c := sampleCard()
		if proj == ProjectionLocalPaths {
			c.Path = "/srv/code/acme"
		}
		s, err := Encode(c, EncodeOptions{Projection: proj})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(s)
		if err != nil {
			t.Fatalf("%s: %v\n%s", proj, err, s)
		}
		if want := Normalize(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip\n got %#v\nwant %#v", proj, got, want)
		}
	}
	n := Normalize(sampleCard())
	if n.Description != `Go client for the Acme payments API: charges, refunds and "webhooks". Second line.` {
		t.Errorf("description %q", n.Description)
	}
	if !reflect.DeepEqual(n.Tags, []string{"payments", "sdk"}) || !reflect.DeepEqual(n.Keywords, []string{"billing", "#hash"}) {
		t.Errorf("lists %v %v", n.Tags, n.Keywords)
	}
}

// The form GBrain hands back: keys in JSONB order, single quotes, tags last
// as a block list, body trimmed.
func TestDecodeGBrainReserialised(t *testing.T) {
	b, err := os.ReadFile("testdata/card_gbrain_reserialised.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := Normalize(sampleCard())
	want.Description = "Go client for the Acme payments API: charges, refunds and 'webhooks'."
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	base, err := Encode(sampleCard(), EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("sample lacks %q", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	cases := []struct {
		name    string
		content string
		want    error
	}{
		{"wrong locator machine", replace("locator: local-codegraph://m-42b1/", "locator: local-codegraph://m-evil/"), ErrCardTampered},
		{"wrong locator project", replace("/p-7f3a9c\n", "/p-other\n"), ErrCardTampered},
		{"missing marker", replace("generator: cgcat\n", ""), ErrNotOurCard},
		{"other generator", replace("generator: cgcat\n", "generator: someone\n"), ErrNotOurCard},
		{"path in reference-only", replace("projection: reference-only\n", "projection: reference-only\npath: /etc\n"), ErrPathForbidden},
		{"id key", replace("type: project\n", "type: project\nid: x\n"), ErrNotOurCard},
		{"root key not hex", replace(`root_key: "5d1c0f3a9b7e24681f0e3d2c4b5a6978"`, `root_key: "/home/dev/code"`), ErrCardInvalid},
		{"other type", replace("type: project\n", "type: person\n"), ErrNotOurCard},
		{"newer version", replace("card_version: 2\n", "card_version: 3\n"), ErrCardTooNew},
		{"no version", replace("card_version: 2\n", ""), ErrCardInvalid},
		{"unknown availability", replace("availability: present\n", "availability: gone\n"), ErrCardInvalid},
		{"moved to itself", replace("availability: present\n", "availability: missing\nmoved_to: p-7f3a9c\n"), ErrCardInvalid},
		{"moved to a path", replace("availability: present\n", "availability: missing\nmoved_to: /home/x\n"), ErrCardInvalid},
		{"revision not a number", replace("record_revision: 7\n", "record_revision: seven\n"), ErrCardInvalid},
		{"quoted revision", replace("record_revision: 7\n", "record_revision: '7'\n"), ErrCardInvalid},
		{"negative revision", replace("record_revision: 7\n", "record_revision: -7\n"), ErrCardInvalid},
		{"uppercase project id", strings.ReplaceAll(base, "p-7f3a9c", "P-7F3A9C"), ErrCardInvalid},
		{"duplicate key", replace("type: project\n", "type: project\ntype: project\n"), ErrCardInvalid},
		{"nested map", replace("projection: reference-only\n", "projection: reference-only\nextra:\n  a: b\n"), ErrCardInvalid},
		{"anchor", replace("record_revision: 7\n", "record_revision: &a 7\n"), ErrCardInvalid},
		{"block scalar", replace("record_revision: 7\n", "note: |\n  text\nrecord_revision: 7\n"), ErrCardInvalid},
		{"no fence", strings.TrimPrefix(base, "---\n"), ErrCardInvalid},
		{"unclosed fence", base[:strings.Index(base, "\n---\n")+1], ErrCardInvalid},
		{"bad escape", replace(`"Acme Payments SDK"`, `"Acme \q"`), ErrCardInvalid},
		{"unterminated quote", replace(`"Acme Payments SDK"`, `"Acme`), ErrCardInvalid},
		{"too big", base + strings.Repeat("x", MaxCardBytes), ErrCardInvalid},
		{"not utf-8", base + "\xff", ErrCardInvalid},
		{"tab", replace("type: project\n", "type:\tproject\n"), ErrCardInvalid},
		{"long title", replace(`"Acme Payments SDK"`, `"`+strings.Repeat("a", MaxNameLen+1)+`"`), ErrCardInvalid},
		{"too many packages", replace("packages:\n", "packages:\n"+strings.Repeat("  - x\n", MaxItems+1)), ErrCardInvalid},
		{"local-paths without path", replace("projection: reference-only\n", "projection: local-paths\n"), ErrCardInvalid},
		{"relative path", replace("projection: reference-only\n", "projection: local-paths\npath: code/x\n"), ErrCardInvalid},
		{"unclean path", replace("projection: reference-only\n", "projection: local-paths\npath: /code/../etc\n"), ErrCardInvalid},
		{"unknown projection", replace("projection: reference-only\n", "projection: everything\n"), ErrCardInvalid},
		{"empty", "", ErrCardInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.content)
			if !errors.Is(err, tc.want) {
				t.Errorf("Decode error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeAcceptsVariants(t *testing.T) {
	content := "---\r\n" +
		"title: 'It''s a project' # comment\r\n" +
		"type: project\r\n" +
		"machine_id: m1\r\n" +
		"project_id: p1\r\n" +
		"locator: local-codegraph://m1/p1\r\n" +
		"generator: cgcat\r\n" +
		"card_version: 1\r\n" +
		"projection: local-paths\r\n" +
		"path: \"/home/u/\\u4ee3\\u7801\"\r\n" +
		"record_revision: 3\r\n" +
		"packages: [a, 'b, c', \"d\"]\r\n" +
		"keywords: []\r\n" +
		"description: ~\r\n" +
		"widened: '2024-01-02T00:00:00.000Z'\r\n" +
		"tags:\r\n" +
		"- cgcat-card\r\n" +
		"- Z\r\n" +
		"---\r\n"
	got, err := Decode(content)
	if err != nil {
		t.Fatal(err)
	}
	want := Card{ProjectID: "p1", MachineID: "m1", Name: "It's a project", Packages: []string{"a", "b, c", "d"},
		Tags: []string{"z"}, RecordRevision: 3, Path: "/home/u/代码", Availability: "present"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
}

func TestEncodeRejects(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Card)
		opts EncodeOptions
	}{
		{"uppercase project id", func(c *Card) { c.ProjectID = "P1" }, EncodeOptions{}},
		{"bad machine id", func(c *Card) { c.MachineID = "m/1" }, EncodeOptions{}},
		{"empty name", func(c *Card) { c.Name = " \t" }, EncodeOptions{}},
		{"path in reference-only", func(c *Card) { c.Path = "/x" }, EncodeOptions{}},
		{"no path in local-paths", func(c *Card) {}, EncodeOptions{Projection: ProjectionLocalPaths}},
		{"relative path", func(c *Card) { c.Path = "x/y" }, EncodeOptions{Projection: ProjectionLocalPaths}},
		{"control char in path", func(c *Card) { c.Path = "/x\ny" }, EncodeOptions{Projection: ProjectionLocalPaths}},
		{"unknown projection", func(c *Card) {}, EncodeOptions{Projection: "all"}},
	}
	for _, tc := range cases {
		c := sampleCard()
		tc.mod(&c)
		if _, err := Encode(c, tc.opts); !errors.Is(err, ErrCardInvalid) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestCardSlugAndValidation(t *testing.T) {
	if s, err := CardSlug("catalog/codegraph", "p-1"); err != nil || s != "catalog/codegraph/p-1" {
		t.Errorf("CardSlug = %q, %v", s, err)
	}
	for _, tc := range [][2]string{
		{"Catalog/codegraph", "p1"}, {"catalog", "P1"}, {"/catalog", "p1"}, {"catalog/../x", "p1"},
		{"catalog", ""}, {"catalog", "p/1"}, {"catalog", "p1%2f"}, {"cata log", "p1"}, {"catalog\\x", "p1"},
		{"catalog\u202e", "p1"}, {"", "p1"}, {"catalog/", "p1"},
	} {
		if _, err := CardSlug(tc[0], tc[1]); !errors.Is(err, ErrInvalidSlug) {
			t.Errorf("CardSlug(%q, %q) err = %v", tc[0], tc[1], err)
		}
	}
	for _, ok := range []string{"default", "cgcat-cards", "a", strings.Repeat("a", 32)} {
		if !ValidSourceID(ok) {
			t.Errorf("ValidSourceID(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "Bad_Source", "a_b", strings.Repeat("a", 33), "a b", "ü"} {
		if ValidSourceID(bad) {
			t.Errorf("ValidSourceID(%q) = true", bad)
		}
	}
}

func TestContentHash(t *testing.T) {
	if ContentHash("a") == ContentHash("b") || ContentHash("x") != ContentHash("x") {
		t.Fatal("ContentHash is not a function of its input")
	}
	// xxh3-64 of the empty string.
	if got := ContentHash(""); got != 0x2d06800538d394c2 {
		t.Errorf("ContentHash(\"\") = %#x", got)
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"card_reference_only.md", "card_local_paths.md", "card_minimal.md", "card_gbrain_reserialised.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("---\n---\n")
	f.Add("---\nkey: [a, 'b''c', \"\\u0041\"]\n---\n")
	f.Add("---\nk:\n  - a\n  - \"b\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Decode(s)
		if err != nil {
			return
		}
		// Whatever decodes is a well-formed, normalised card that encodes.
		if !reflect.DeepEqual(c, Normalize(c)) {
			t.Fatalf("decoded card is not normalised: %#v", c)
		}
		proj := ProjectionReferenceOnly
		if c.Path != "" {
			proj = ProjectionLocalPaths
		}
		enc, err := Encode(c, EncodeOptions{Projection: proj})
		if err != nil {
			t.Fatalf("decoded card does not encode: %v", err)
		}
		back, err := Decode(enc)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("re-decode: %v\n%#v\n%#v", err, back, c)
		}
	})
}

// Format 2 carries the project's availability and movedTo, and tags every
// card with the format and its machine (list_pages enumerates one
// machine's cards by that tag); none of cgcat's own tags reads back as a
// project tag, and a format-1 card reads as present.
func TestCardFormat2(t *testing.T) {
	c := sampleCard()
	c.Availability, c.MovedTo = "missing", "p-new1"
	c.Tags = append(c.Tags, "cgcat-m-someone", FormatTag)
	s, err := Encode(c, EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"card_version: 2\n", "availability: missing\n", "moved_to: p-new1\n", `  - "` + FormatTag + `"`, `  - "` + MachineTag("m-42b1") + `"`,
		"now project p-new1", "Availability on its machine: missing"} {
		if !strings.Contains(s, want) {
			t.Errorf("card lacks %q:\n%s", want, s)
		}
	}
	got, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Availability != "missing" || got.MovedTo != "p-new1" || !reflect.DeepEqual(got.Tags, []string{"payments", "sdk"}) {
		t.Errorf("decoded %+v", got)
	}
	old, err := os.ReadFile("testdata/card_gbrain_reserialised.md")
	if err != nil {
		t.Fatal(err)
	}
	if v1, err := Decode(string(old)); err != nil || v1.Availability != "present" || v1.MovedTo != "" {
		t.Errorf("a format-1 card: %+v %v", v1, err)
	}
}
