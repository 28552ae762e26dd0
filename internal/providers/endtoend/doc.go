// Package endtoend checks provider adapters where callers see their work:
// an adapter behind the whole router (the race, the chat API, the store),
// talking to a fake provider that speaks a real provider's wire format. Its
// tests need a PostgreSQL (internal/testdb). It holds tests only.
package endtoend
