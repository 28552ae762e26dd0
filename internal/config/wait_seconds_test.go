package config

import "testing"

// A wait that is not whole seconds was echoed rounded down (500ms answered
// "Preference-Applied: wait=0", which reads as no preference applied): the
// configuration refuses it and names a whole-second value to write instead.
func TestWaitsAreWholeSeconds(t *testing.T) {
	mustRefuse(t, "http: {default_wait: 1500ms, max_wait: 500ms}\n",
		"http.default_wait (1.5s) must be a whole number of seconds, such as 2s",
		"http.max_wait (500ms) must be a whole number of seconds, such as 1s")
	if _, err := Parse([]byte("http: {default_wait: 2s, max_wait: 1m}\n")); err != nil {
		t.Fatalf("whole seconds refused: %v", err)
	}
}
