package config

import "testing"

// A true/false setting written quoted reads as the word: a quoted 'no' was
// already read as false (yaml.v3's YAML 1.1 words), while a quoted 'false'
// was refused as "not true or false". Anything else quoted is still refused.
func TestQuotedTrueOrFalse(t *testing.T) {
	for y, want := range map[string]bool{
		"auto_migrate: 'false'\n": false, `auto_migrate: "TRUE"` + "\n": true,
		"auto_migrate: 'no'\n": false, "auto_migrate: true\n": true,
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Errorf("%q refused: %v", y, err)
			continue
		}
		if c.AutoMigrate == nil || *c.AutoMigrate != want {
			t.Errorf("%q: auto_migrate %v, want %v", y, c.AutoMigrate, want)
		}
	}
	mustRefuse(t, "auto_migrate: 'maybe'\n", `auto_migrate: "maybe" is not true or false`)
}
