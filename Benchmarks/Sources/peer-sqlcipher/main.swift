// peer-sqlcipher: SQLCipher (libsqlcipher) for `cask-bench peers`: the same table as
// peer-sqlite in a database encrypted page by page (AES-256-CBC, HMAC per page), values stored
// plain inside it; for `cask-bench objects`, the objects' JSON as plain rows of the encrypted
// database; for `cask-bench queries`, events with SQL indexes on the queried fields (for
// `cask-bench cold`'s disk comparison, also one on (city, date)).
// Its own process: SQLCipher exports SQLite's symbols.
import CSQLCipher
import PeerKit

let library = SQLiteLibrary(
  openV2: sqlite3_open_v2, closeV2: sqlite3_close_v2, prepareV2: sqlite3_prepare_v2, step: sqlite3_step,
  reset: sqlite3_reset, finalize: sqlite3_finalize, bindText: sqlite3_bind_text, bindBlob: sqlite3_bind_blob,
  bindDouble: sqlite3_bind_double, bindInt64: sqlite3_bind_int64, columnBlob: sqlite3_column_blob,
  columnInt64: sqlite3_column_int64, columnBytes: sqlite3_column_bytes, errmsg: sqlite3_errmsg,
  busyTimeout: sqlite3_busy_timeout)

// A raw 256-bit key (`x'…'`): SQLCipher then runs no PBKDF2 (64,000 iterations in SQLCipher 3)
// at open, as every other engine here opens with keys derived before, so that `open` compares
// the engines and not the password functions. `cipher_page_size = 4096` matches SQLite's page
// size (SQLCipher 3's default is 1024, which costs a MAC per 1 KiB).
let rawKey = "x'" + String(repeating: "5c", count: 32) + "'"
let sqlcipher = SQLiteSetup(
  library: library,
  connectionPragmas: ["PRAGMA key = \"\(rawKey)\"", "PRAGMA cipher_page_size = 4096"],
  name: "sqlcipher",
  description:
    "SQLCipher 3.4.1 (SQLite \(String(cString: sqlite3_libversion()))), PRAGMA key with a raw key, cipher_page_size 4096"
)

PeerMain.run([
  SQLiteOpener(sqlcipher), SQLiteObjectOpener(sqlcipher, perObjectPBKDF2: false, sealsRows: false),
  SQLiteEventOpener(sqlcipher), SQLiteEventOpener(sqlcipher, cityDateIndex: true),
])
