package api

// ListPageBytes is the most of encoded jobs a page of GET /v1/jobs holds,
// and one job more (listPageBytes).
const ListPageBytes = listPageBytes
