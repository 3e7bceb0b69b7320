// peer-sqlite: SQLite (libsqlite3) for `cask-bench peers` and `cask-bench objects`.
// Engines: sqlite+rncryptor (each value encrypted, keys derived once), sqlite+pbkdf2 (the
// design with PBKDF2 per value, run on a small sample), and sqlite (plain, for reference);
// for `cask-bench queries`, events in sealed rows (sqlite+rncryptor: only the id plain).
import CSQLite
import PeerKit

let library = SQLiteLibrary(
  openV2: sqlite3_open_v2, closeV2: sqlite3_close_v2, prepareV2: sqlite3_prepare_v2, step: sqlite3_step,
  reset: sqlite3_reset, finalize: sqlite3_finalize, bindText: sqlite3_bind_text, bindBlob: sqlite3_bind_blob,
  bindDouble: sqlite3_bind_double, bindInt64: sqlite3_bind_int64, columnBlob: sqlite3_column_blob,
  columnInt64: sqlite3_column_int64, columnBytes: sqlite3_column_bytes, errmsg: sqlite3_errmsg,
  busyTimeout: sqlite3_busy_timeout)

let sqlite = SQLiteSetup(
  library: library, connectionPragmas: [], name: "sqlite",
  description: "SQLite \(String(cString: sqlite3_libversion())), page size 4096, default cache")

PeerMain.run([
  SQLiteOpener(sqlite), EncryptedOpener(SQLiteOpener(sqlite)),
  EncryptedOpener(SQLiteOpener(sqlite), perValuePBKDF2: true),
  SQLiteObjectOpener(sqlite, perObjectPBKDF2: false), SQLiteObjectOpener(sqlite, perObjectPBKDF2: true),
  SQLiteSealedEventOpener(sqlite),
])
