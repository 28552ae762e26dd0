package config

import "testing"

// http.max_header_bytes defaults to 64 KiB and is refused outside 1 KiB to
// 1 MiB (a written 0 included), naming the setting and its range.
func TestMaxHeaderBytesDefaultAndRange(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	if n := (Config{}).WithDefaults().HTTP.MaxHeaderBytes; n != 64<<10 {
		t.Fatalf("http.max_header_bytes default %d, want 65536", n)
	}
	for _, bad := range []string{"0", "-1", "1023", "1048577"} {
		mustRefuse(t, "http: {max_header_bytes: "+bad+"}\n",
			"http.max_header_bytes ("+bad+") must be between 1024 (1 KiB) and 1048576 (1 MiB")
	}
	for _, good := range []string{"1024", "1048576"} {
		if _, err := Parse([]byte("http: {max_header_bytes: " + good + "}\n")); err != nil {
			t.Errorf("http.max_header_bytes %s refused: %v", good, err)
		}
	}
}
