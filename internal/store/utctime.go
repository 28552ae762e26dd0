package store

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// registerUTCTimestamps makes m read timestamptz values (and arrays of them)
// as times in UTC. pgx's default codec returns them in time.Local, the
// process's time zone: a replica run with TZ=Asia/Kolkata rendered a job's
// created_at as "…+05:30" where a UTC replica rendered "…Z" for the same
// instant, in job resources and webhook bodies alike. The instant is
// unchanged; only its location is fixed, so every replica writes the same
// bytes for one job. Values sent to the database are unaffected: a time.Time
// is an instant whatever its location.
func registerUTCTimestamps(m *pgtype.Map) {
	t := &pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID, Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_timestamptz", OID: pgtype.TimestamptzArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}
