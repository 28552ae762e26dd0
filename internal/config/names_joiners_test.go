package config

import "testing"

// Route names are the model names callers send (docs/chat.md: `model` is the
// route name), and the configuration takes any UTF-8 name without white
// space, control characters, ',' or '/'. Some scripts need a Unicode format
// character (Cf) to be spelled right: Persian writes ZERO WIDTH NON-JOINER
// (U+200C) inside words (گفت‌وگو, "conversation"; می‌خواهم), Indic scripts use
// ZWJ/ZWNJ (U+200D/U+200C) to pick a conjunct's form, and emoji sequences
// join with ZWJ (👩‍💻). These loaded before the fifty-second session, whose first
// check of format characters refused every Cf character (found in review);
// a joiner is allowed between two visible characters, and refused at an
// edge or doubled (TestJoinerAtAnEdgeIsRefused).
func TestJoinersInNamesLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for what, name := range map[string]string{
		"Persian ZWNJ":      "گفت\u200cوگو",
		"Devanagari ZWJ":    "क्\u200dष",
		"emoji ZWJ":         "👩\u200d💻",
		"route models ZWNJ": "",
	} {
		y := "providers:\n  - {name: a, type: scripted}\nroutes:\n  \"" + name + "\": {providers: [a]}\n"
		if name == "" {
			y = "providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a], models: [\"می\u200cخواهم\"]}\n"
		}
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%s: refused: %v", what, err)
		}
	}
}

// A joiner with nothing visible on one side joins nothing: it is as
// invisible as any other format character, and refused.
func TestJoinerAtAnEdgeIsRefused(t *testing.T) {
	for _, name := range []string{"\u200dabc", "abc\u200c", "a\u200c\u200db", "a\u200d b"} {
		if why := nameProblem(name); why == "" {
			t.Errorf("%q: accepted", name)
		}
	}
	if why := nameProblem("a\u200db"); why != "" {
		t.Errorf("a joiner between two letters: %s", why)
	}
}
