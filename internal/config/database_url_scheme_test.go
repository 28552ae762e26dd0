package config

import (
	"strings"
	"testing"
)

// A database URL with a misspelt scheme and a query string passed the load
// check, which took any value holding "=" for key=value settings; pgx then
// read the whole "postgress://app:PW@…?sslmode" as one unknown setting, sent
// to the default host, whose refusal quoted it, password and all. Found by
// review.
func TestMisspeltSchemeWithQueryRefused(t *testing.T) {
	for _, u := range []string{
		"postgress://app:S3CRETPW@db.prod.internal:5432/router?sslmode=require",
		"postgre://app:S3CRETPW@db/router?sslmode=require",
		"postgres:/app:S3CRETPW@db/router?sslmode=require",
		"mysql://app:S3CRETPW@db/router?x=y",
		"app:S3CRETPW@db/router?sslmode=require", // no scheme
	} {
		t.Setenv("DATABASE_URL", u)
		_, err := Parse([]byte("providers: [{name: a, type: scripted}]\nroutes: {default: {providers: [a]}}\n"))
		if err == nil {
			t.Errorf("DATABASE_URL=%q accepted at load; want it refused as not a PostgreSQL URL", u)
			continue
		}
		if strings.Contains(err.Error(), "S3CRETPW") {
			t.Errorf("refusal repeats the password: %v", err)
		}
		if hint := "did you mean postgres://"; strings.HasPrefix(u, "postg") != strings.Contains(err.Error(), hint) {
			t.Errorf("DATABASE_URL=%q: %v; want %q only for a misspelt postgres scheme", u, err, hint)
		}
	}
}

// PostgreSQL's key=value settings are still accepted, in the forms pgx
// reads: quoted values (with white space, "=" or "://" inside), white space
// around "=", backslash escapes, an empty value.
func TestKeywordSettingsAccepted(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, ok := range []string{
		"host=db.example.com dbname=router",
		"dbname=router",
		" host = /var/run/postgresql  dbname=router sslmode=disable ",
		`host=db password='a b=c://d\'e' user=app`,
		`password=a\ b host=db`,
		"host=db password= dbname=router",
		"host=db\tport=5433\n",
	} {
		if _, err := Parse([]byte("database_url: \"" + strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`).Replace(ok) + "\"\n")); err != nil {
			t.Errorf("database_url %q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"host=db password='unterminated",
		"host db=router", // libpq: missing "=" after "host"
		"=router",
		"1host=db",
	} {
		t.Setenv("DATABASE_URL", bad)
		if _, err := Parse([]byte("{}\n")); err == nil || !strings.Contains(err.Error(), "is not a PostgreSQL URL") {
			t.Errorf("DATABASE_URL=%q: %v; want it refused as not a PostgreSQL URL", bad, err)
		}
	}
}
