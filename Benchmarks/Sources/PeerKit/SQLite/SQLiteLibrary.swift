/// The SQLite C functions the SQL peers call, as function pointers.
///
/// SQLite and SQLCipher export the same symbols, so no process links both, and Swift cannot
/// import the two modules into one target either. The driver (`SQLiteConnection`, `SQLiteStore`)
/// is therefore written once against this table, and each peer executable fills it from its own
/// C module: `peer-sqlite` from `CSQLite`, `peer-sqlcipher` from `CSQLCipher`.
public struct SQLiteLibrary: Sendable {
  public typealias Handle = OpaquePointer?
  public typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void
  public typealias Open =
    @convention(c) (
      UnsafePointer<CChar>?, UnsafeMutablePointer<Handle>?, Int32, UnsafePointer<CChar>?
    ) -> Int32
  public typealias Prepare =
    @convention(c) (
      Handle, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<Handle>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?
    ) -> Int32
  public typealias Call = @convention(c) (Handle) -> Int32
  public typealias BindText = @convention(c) (Handle, Int32, UnsafePointer<CChar>?, Int32, Destructor?) -> Int32
  public typealias BindBlob = @convention(c) (Handle, Int32, UnsafeRawPointer?, Int32, Destructor?) -> Int32
  public typealias BindDouble = @convention(c) (Handle, Int32, Double) -> Int32
  public typealias BindInt64 = @convention(c) (Handle, Int32, Int64) -> Int32
  public typealias ColumnBlob = @convention(c) (Handle, Int32) -> UnsafeRawPointer?
  public typealias ColumnInt64 = @convention(c) (Handle, Int32) -> Int64
  public typealias WithInt32 = @convention(c) (Handle, Int32) -> Int32
  public typealias Message = @convention(c) (Handle) -> UnsafePointer<CChar>?

  let openV2: Open
  let closeV2: Call
  let prepareV2: Prepare
  let step: Call
  let reset: Call
  let finalize: Call
  let bindText: BindText
  let bindBlob: BindBlob
  let bindDouble: BindDouble
  let bindInt64: BindInt64
  let columnBlob: ColumnBlob
  let columnInt64: ColumnInt64
  let columnBytes: WithInt32
  let errmsg: Message
  let busyTimeout: WithInt32

  public init(
    openV2: @escaping Open, closeV2: @escaping Call, prepareV2: @escaping Prepare, step: @escaping Call,
    reset: @escaping Call, finalize: @escaping Call, bindText: @escaping BindText, bindBlob: @escaping BindBlob,
    bindDouble: @escaping BindDouble, bindInt64: @escaping BindInt64, columnBlob: @escaping ColumnBlob,
    columnInt64: @escaping ColumnInt64, columnBytes: @escaping WithInt32, errmsg: @escaping Message,
    busyTimeout: @escaping WithInt32
  ) {
    (self.openV2, self.closeV2, self.prepareV2, self.step, self.reset) = (openV2, closeV2, prepareV2, step, reset)
    (self.finalize, self.bindText, self.bindBlob, self.bindDouble) = (finalize, bindText, bindBlob, bindDouble)
    (self.bindInt64, self.columnBlob, self.columnInt64) = (bindInt64, columnBlob, columnInt64)
    (self.columnBytes, self.errmsg, self.busyTimeout) = (columnBytes, errmsg, busyTimeout)
  }

  /// SQLite's result codes and open flags: part of its stable C interface, the same in
  /// SQLCipher (SQLITE_OK, SQLITE_ROW, SQLITE_DONE; SQLITE_OPEN_READWRITE | CREATE | NOMUTEX).
  static let ok: Int32 = 0
  static let row: Int32 = 100
  static let done: Int32 = 101
  static let openFlags: Int32 = 0x2 | 0x4 | 0x8000
}
