package contract

import "testing"

// A chat job compiles its response_format schema about three times (the
// request, the race's spec, a resolution). BenchmarkRequestSchemaThreeTimes
// compares that for a typical 30-property schema without the cache, with a
// cache that has not seen it (a caller's first request), and with one that
// has (every request after).
func BenchmarkRequestSchemaThreeTimes(b *testing.B) {
	schema := []byte(typicalSchema("bench"))
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for range 3 {
				if _, err := compileRequestSchema(schema, cacheTestName); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := newSchemaCache(maxCachedSchemas, maxCachedBytes, maxCachedEntryBytes, compileRequestSchema)
			for range 3 {
				if _, err := c.getFor(testOwner, schema, cacheTestName); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		c := newSchemaCache(maxCachedSchemas, maxCachedBytes, maxCachedEntryBytes, compileRequestSchema)
		if _, err := c.getFor(testOwner, schema, cacheTestName); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			for range 3 {
				if _, err := c.getFor(testOwner, schema, cacheTestName); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
