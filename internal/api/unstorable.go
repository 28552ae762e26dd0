package api

import (
	"errors"
	"net/http"

	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/store"
)

// A request whose JSON the database cannot hold is the caller's to fix, and
// a 400 that says so: answered as an internal error ("resend with the same
// key"), every resend failed the same way, for ever. Numbers beyond
// PostgreSQL's numeric (1e400000), or that it writes out far longer than sent
// (1e131000), are refused before anything is stored
// (outOfRangeNumber); anything else PostgreSQL refuses as data when the job
// is created is store.ErrUnstorable, whose claim left nothing behind.

// checkNumbers finds a number the database cannot store. Package state: a
// test that runs alone (not t.Parallel) may replace it (SkipNumberCheck), to
// reach the database's own refusal.
var checkNumbers = jsontext.CheckNumbers

// outOfRangeNumber is the detail of a 400 for a body holding a number the
// database cannot store ("" when it holds none), and the member it is in.
func outOfRangeNumber(body []byte) (detail, param string) {
	e := checkNumbers(body)
	if e == nil {
		return "", ""
	}
	return e.Error() + "; send it with fewer digits or a smaller exponent, or as a string. Nothing was stored", e.Path
}

// numberProblem is outOfRangeNumber as a problem (nil for none).
func numberProblem(body []byte) *problem {
	detail, _ := outOfRangeNumber(body)
	if detail == "" {
		return nil
	}
	return &problem{Status: http.StatusBadRequest, Type: "number-out-of-range", Title: "Number out of range", Detail: detail}
}

// unstorableDetail is the detail of a 400 for a job the database refused to
// create for its data (store.ErrUnstorable).
func unstorableDetail(err error) string {
	reason := err.Error()
	var u *store.UnstorableError
	if errors.As(err, &u) {
		reason = u.Reason + " (SQLSTATE " + u.Code + ")"
	}
	return "the database refused the request's data: " + reason + ". Nothing was stored, and the Idempotency-Key is not bound: " +
		"correct the value (a number within PostgreSQL's numeric, text without NUL characters) and send the request again"
}

// unstorableProblem is unstorableDetail as a problem.
func unstorableProblem(err error) problem {
	return problem{Status: http.StatusBadRequest, Type: "unstorable-request", Title: "Request data cannot be stored", Detail: unstorableDetail(err)}
}
