// SQLCipher (libsqlcipher-dev) for peer-sqlcipher: SQLite's API with page-level encryption,
// enabled by `PRAGMA key`. Its header is SQLite's, under its own folder.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
