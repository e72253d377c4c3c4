package sqlcdb

// PendingPageSQL is the statement of PendingPage, for the test that
// keeps its index in use (EXPLAIN needs the text).
const PendingPageSQL = pendingPage
