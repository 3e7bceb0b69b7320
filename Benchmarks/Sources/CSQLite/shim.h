// SQLite (libsqlite3-dev) for peer-sqlite. SQLCipher exports the same symbols, so the two are
// never linked into one process: each peer is its own executable.
#include <sqlite3.h>
