/// The SQLite C functions the SQL peers call, as function pointers.
///
/// SQLite and SQLCipher export the same symbols, so no process links both, and Swift cannot
/// import the two modules into one target either. The driver (`SQLiteConnection`, `SQLiteStore`)
/// is therefore written once against this table, and each peer executable fills it from its own
/// C module: `peer-sqlite` from `CSQLite`, `peer-sqlcipher` from `CSQLCipher`.
public struct SQLiteLibrary: Sendable {
  public typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void

  public var openV2:
    @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
  public var closeV2: @convention(c) (OpaquePointer?) -> Int32
  public var prepareV2:
    @convention(c) (
      OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
      UnsafeMutablePointer<UnsafePointer<CChar>?>?
    ) -> Int32
  public var step: @convention(c) (OpaquePointer?) -> Int32
  public var reset: @convention(c) (OpaquePointer?) -> Int32
  public var finalize: @convention(c) (OpaquePointer?) -> Int32
  public var bindText: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Destructor?) -> Int32
  public var bindBlob: @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?, Int32, Destructor?) -> Int32
  public var bindDouble: @convention(c) (OpaquePointer?, Int32, Double) -> Int32
  public var bindInt64: @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
  public var columnBlob: @convention(c) (OpaquePointer?, Int32) -> UnsafeRawPointer?
  public var columnInt64: @convention(c) (OpaquePointer?, Int32) -> Int64
  public var columnBytes: @convention(c) (OpaquePointer?, Int32) -> Int32
  public var errmsg: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
  public var busyTimeout: @convention(c) (OpaquePointer?, Int32) -> Int32
  /// The result codes and open flags, from the same header.
  public var codes: Codes

  public struct Codes: Sendable {
    public var ok: Int32
    public var row: Int32
    public var done: Int32
    public var openReadWrite: Int32
    public var openCreate: Int32
    public var openNoMutex: Int32

    public init(ok: Int32, row: Int32, done: Int32, openReadWrite: Int32, openCreate: Int32, openNoMutex: Int32) {
      self.ok = ok
      self.row = row
      self.done = done
      self.openReadWrite = openReadWrite
      self.openCreate = openCreate
      self.openNoMutex = openNoMutex
    }
  }

  public init(
    openV2:
      @escaping @convention(c) (
        UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?
      ) -> Int32,
    closeV2: @escaping @convention(c) (OpaquePointer?) -> Int32,
    prepareV2:
      @escaping @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
        UnsafeMutablePointer<UnsafePointer<CChar>?>?
      ) -> Int32,
    step: @escaping @convention(c) (OpaquePointer?) -> Int32,
    reset: @escaping @convention(c) (OpaquePointer?) -> Int32,
    finalize: @escaping @convention(c) (OpaquePointer?) -> Int32,
    bindText: @escaping @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Destructor?) -> Int32,
    bindBlob: @escaping @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?, Int32, Destructor?) -> Int32,
    bindDouble: @escaping @convention(c) (OpaquePointer?, Int32, Double) -> Int32,
    bindInt64: @escaping @convention(c) (OpaquePointer?, Int32, Int64) -> Int32,
    columnBlob: @escaping @convention(c) (OpaquePointer?, Int32) -> UnsafeRawPointer?,
    columnInt64: @escaping @convention(c) (OpaquePointer?, Int32) -> Int64,
    columnBytes: @escaping @convention(c) (OpaquePointer?, Int32) -> Int32,
    errmsg: @escaping @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?,
    busyTimeout: @escaping @convention(c) (OpaquePointer?, Int32) -> Int32,
    codes: Codes
  ) {
    self.openV2 = openV2
    self.closeV2 = closeV2
    self.prepareV2 = prepareV2
    self.step = step
    self.reset = reset
    self.finalize = finalize
    self.bindText = bindText
    self.bindBlob = bindBlob
    self.bindDouble = bindDouble
    self.bindInt64 = bindInt64
    self.columnBlob = columnBlob
    self.columnInt64 = columnInt64
    self.columnBytes = columnBytes
    self.errmsg = errmsg
    self.busyTimeout = busyTimeout
    self.codes = codes
  }
}
