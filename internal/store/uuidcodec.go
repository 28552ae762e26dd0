package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ConfigurePool prepares every connection of a pool the store will use:
// timestamps are read in UTC whatever the process's time zone (see
// registerUTCTimestamps), and arrays of string ids bound to uuid[] parameters
// are sent in binary (see registerStringUUID).
// Connect calls it; a caller that builds its own pool must too: without it
// the store still works, but slower, and the times it returns (in job
// resources and webhook bodies) follow the process's local time zone, so
// replicas in different zones render one job differently. An AfterConnect
// already set still runs, after.
//
// It also bounds the ping with which pgxpool checks a connection idle for
// more than a second before handing it out (PingTimeout, DefaultPingTimeout
// unless already set, as pool_ping_timeout in the URL sets it). Unbounded,
// the ping waits as long as its caller's context: a connection that died
// silently while idle (a NAT or firewall that dropped the flow, a failover
// whose old primary vanished, a partition) held the batch of claims and wins
// that drew it for the batch's whole bound (30 s), and the claims' retries
// drew the next dead one. A ping past its bound destroys the connection and
// pgxpool hands out the next one, or dials a new one.
func ConfigurePool(cfg *pgxpool.Config) {
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = DefaultPingTimeout
	}
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		registerUTCTimestamps(conn.TypeMap())
		registerStringUUID(conn.TypeMap())
		if next != nil {
			return next(ctx, conn)
		}
		return nil
	}
}

// DefaultPingTimeout bounds pgxpool's liveness ping of a connection idle
// for more than a second, before the pool hands it out (see ConfigurePool):
// an empty query, one round trip, which a live server answers in well under
// it even when loaded. A connection that does not answer is destroyed (the
// cost of a false verdict is one new connection).
const DefaultPingTimeout = time.Second

// registerStringUUID makes m encode Go strings as uuid in binary, which is
// what matters for arrays: the store keeps ids as strings, and for a []string
// or []*string bound to uuid[] pgx tries binary first, which its own uuid
// codec cannot do for strings — each such parameter cost a failed search for
// a binary encoding and an error built and thrown away before the text
// encoding (about 3% of the router's CPU under load: the batched claim and
// win send their ids as arrays). A lone string parameter pgx sends as text
// from the start; that is unchanged.
func registerStringUUID(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: stringUUIDCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// stringUUIDCodec is pgtype.UUIDCodec that also encodes a string in binary.
// A string that is not a UUID fails the binary encoding; pgx then sends it as
// text, and PostgreSQL rejects it as it always did (invalid input syntax for
// type uuid).
type stringUUIDCodec struct{ pgtype.UUIDCodec }

func (c stringUUIDCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(string); ok && format == pgtype.BinaryFormatCode {
		return encodeStringUUID{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

type encodeStringUUID struct{}

func (encodeStringUUID) Encode(value any, buf []byte) ([]byte, error) {
	u, err := uuid.Parse(value.(string))
	if err != nil {
		return nil, err
	}
	return append(buf, u[:]...), nil
}
