package prompt

import "testing"

func TestHasJSONWord(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "json": true, "JSON": true, "a JsOn b": true, "jso": false, "j s o n": false,
		"jjson": true, "jsoN.": true, "Jason": false, "xj": false, "ǰson": false,
	} {
		if got := hasJSONWord(s); got != want {
			t.Errorf("hasJSONWord(%q) = %v, want %v", s, got, want)
		}
	}
}
