package providers

import "testing"

func TestMentionsJSON(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "json": true, "JSON": true, "a JsOn b": true, "jso": false, "j s o n": false,
		"jjson": true, "jsoN.": true, "Jason": false, "xj": false, "ǰson": false,
	} {
		if got := MentionsJSON(s); got != want {
			t.Errorf("MentionsJSON(%q) = %v, want %v", s, got, want)
		}
	}
}
