import Foundation

/// A value bound to one parameter of a statement.
enum SQLiteValue {
  case text(String)
  case integer(Int)
  case double(Double)
  case blob(Data)
}

extension SQLiteStatement {
  /// SQLite's `SQLITE_TRANSIENT`: the library copies a bound text or blob before the call
  /// returns, so the Swift buffer may go away.
  private static let transient = unsafeBitCast(-1, to: SQLiteLibrary.Destructor.self)

  /// Binds `values` to parameters 1, 2, ..., steps through every row, calling `row` on each,
  /// and resets the statement.
  func run(_ values: [SQLiteValue], row: () throws -> Void = {}) throws {
    defer { _ = library.reset(handle) }
    for (offset, value) in values.enumerated() {
      let parameter = Int32(offset + 1)
      let status: Int32
      switch value {
      case .text(let text):
        status = library.bindText(handle, parameter, text, -1, Self.transient)
      case .integer(let number):
        status = library.bindInt64(handle, parameter, Int64(number))
      case .double(let number):
        status = library.bindDouble(handle, parameter, number)
      case .blob(let data):
        status = data.withUnsafeBytes { bytes in
          library.bindBlob(handle, parameter, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
      }
      guard status == SQLiteLibrary.ok else { throw connection.error("bind", status) }
    }
    while try step() { try row() }
  }

  /// Column `index` of the current row as an integer.
  func int64(_ index: Int32) -> Int64 {
    library.columnInt64(handle, index)
  }
}
