internal import CaskPlatform
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension RNCryptor {
  /// Encrypts the file at `source` into a password message at `destination`.
  ///
  /// Streams in chunks of `chunkSize` bytes; `destination` appears (atomically, by rename)
  /// only when the whole message has been written and synced. With `replacing: false` a file
  /// that exists at `destination` when the output is ready (even one made while this ran) is
  /// left alone and the call throws `.file(operation: "create", path: destination, errno:
  /// EEXIST)`.
  ///
  /// - Throws: `.file` for I/O failures, and the codec's errors. A failure to sync the
  ///   directory after the rename is thrown too, though `destination` then already holds the
  ///   whole output (only its name may not survive a power cut).
  /// - Complexity: two PBKDF2 runs plus O(n), memory O(chunkSize).
  public static func encryptFile(
    at source: String, to destination: String, password: String, chunkSize: Int = 1 << 20, replacing: Bool = true
  ) throws {
    let encryptor = try Encryptor(password: password)
    try transformFile(
      at: source, to: destination, chunkSize: chunkSize, replacing: replacing, update: encryptor.update,
      finalize: encryptor.finalize)
  }

  /// Encrypts the file at `source` into a key message at `destination`.
  public static func encryptFile(
    at source: String, to destination: String, keys: Keys, chunkSize: Int = 1 << 20, replacing: Bool = true
  ) throws {
    let encryptor = try Encryptor(keys: keys)
    try transformFile(
      at: source, to: destination, chunkSize: chunkSize, replacing: replacing, update: encryptor.update,
      finalize: encryptor.finalize)
  }

  /// Decrypts the password message in `source` into `destination`.
  ///
  /// The plaintext goes to a temporary file beside `destination`, which is synced and renamed
  /// into place only after the HMAC has verified. On any failure, including a wrong password
  /// or a modified or truncated message, the temporary file is removed and `destination` is
  /// left as it was: no unauthenticated byte ever appears under that name. `replacing` as for
  /// `encryptFile(at:to:password:chunkSize:replacing:)`.
  ///
  /// - Throws: `.authenticationFailed`, `.messageTooShort`, `.file`, and the header errors.
  public static func decryptFile(
    at source: String, to destination: String, password: String, chunkSize: Int = 1 << 20, replacing: Bool = true
  ) throws {
    let decryptor = Decryptor(password: password)
    try transformFile(
      at: source, to: destination, chunkSize: chunkSize, replacing: replacing, update: decryptor.update,
      finalize: decryptor.finalize)
  }

  /// Decrypts the key message in `source` into `destination`; see `decryptFile(at:to:password:)`.
  public static func decryptFile(
    at source: String, to destination: String, keys: Keys, chunkSize: Int = 1 << 20, replacing: Bool = true
  ) throws {
    let decryptor = Decryptor(keys: keys)
    try transformFile(
      at: source, to: destination, chunkSize: chunkSize, replacing: replacing, update: decryptor.update,
      finalize: decryptor.finalize)
  }

  /// The longest piece of the destination's name that goes into the temporary name, in bytes.
  private static let maximumNameInTemporary = 200
  /// The largest chunk read at once (64 MiB); larger `chunkSize` values are cut to it.
  private static let maximumChunkSize = 1 << 26

  /// Streams `source` through `update`/`finalize` into a temporary file, then moves it to
  /// `destination` and syncs the directory.
  private static func transformFile(
    at source: String, to destination: String, chunkSize: Int, replacing: Bool,
    update: (Data) throws -> Data, finalize: () throws -> Data
  ) throws {
    let input = try PlainFile(openForReading: source)
    defer { input.close() }
    let directory = FilePath.directory(of: destination)
    // The temporary name adds up to 26 bytes to the destination's: cut the name so that it
    // stays within NAME_MAX (255) for every name the file system accepts.
    var name = Substring((destination as NSString).lastPathComponent)
    while name.utf8.count > maximumNameInTemporary { name = name.dropLast() }
    let random = try LibCrypto.randomData(count: 8).map { String($0, radix: 16) }.joined()
    let temporary = (directory.isEmpty ? "" : directory + "/") + ".\(name).\(random).partial"
    // Errors about the temporary file name `destination`: the caller never typed the hidden name.
    let output = try PlainFile(creating: temporary, reportedAs: destination)
    var renamed = false
    defer {
      output.close()
      if !renamed { unlink(temporary) }
    }
    // A huge chunk size (`.max` for "all at once") would trap allocating the read buffer.
    let size = Swift.min(Swift.max(1, chunkSize), maximumChunkSize)
    while true {
      let chunk = try input.read(upTo: size)
      if chunk.isEmpty { break }
      try output.write(update(chunk))
    }
    try output.write(finalize())
    try output.sync()
    try publish(temporary, as: destination, replacing: replacing)
    renamed = true
    try PlainFile.syncDirectory(directory.isEmpty ? "." : directory)
  }

  /// Gives the finished file at `temporary` the name `destination`, atomically. Not
  /// `replacing`: a hard link, which the kernel refuses if the name exists (no window between
  /// a check and the rename), then the temporary name goes. On a file system without hard
  /// links the name is checked, then renamed over.
  private static func publish(_ temporary: String, as destination: String, replacing: Bool) throws {
    if !replacing {
      if link(temporary, destination) == 0 {
        unlink(temporary)
        return
      }
      let code = errno
      guard [EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS].contains(code) else {
        throw Error.file(operation: code == EEXIST ? "create" : "link", path: destination, errno: code)
      }
      var status = stat()
      guard lstat(destination, &status) != 0, errno == ENOENT else {
        throw Error.file(operation: "create", path: destination, errno: EEXIST)
      }
    }
    guard rename(temporary, destination) == 0 else {
      throw Error.file(operation: "rename", path: destination, errno: errno)
    }
  }
}

/// A file descriptor with the few operations the file helpers need, retrying `EINTR`.
private final class PlainFile {
  private var descriptor: Int32
  /// The path errors name.
  private let path: String

  init(openForReading path: String) throws {
    self.path = path
    descriptor = try PlainFile.open(path, O_RDONLY | O_CLOEXEC, 0)
  }

  /// Creates the file at `path`; errors (a failed create as `write`) name `name`.
  init(creating path: String, reportedAs name: String) throws {
    self.path = name
    descriptor = try PlainFile.open(
      path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600, operation: "write", reportedAs: name,
      removingOnFailure: true)
  }

  /// - Parameter removingOnFailure: the file was made by this open (`O_CREAT | O_EXCL`), so
  ///   a failure after it (moving the descriptor off 0-2) removes it again.
  private static func open(
    _ path: String, _ flags: Int32, _ mode: mode_t, operation: String = "open", reportedAs name: String? = nil,
    removingOnFailure: Bool = false
  ) throws -> Int32 {
    let (descriptor, code) = SystemCall.retrying { Glibc.open(path, flags, mode) }
    guard descriptor >= 0 else { throw RNCryptor.Error.file(operation: operation, path: name ?? path, errno: code) }
    switch StandardDescriptors.keepingOff(descriptor) {
    case .success(let raised): return raised
    case .failure(let failure):
      if removingOnFailure { unlink(path) }
      throw RNCryptor.Error.file(operation: failure.operation, path: name ?? path, errno: failure.code)
    }
  }

  static func syncDirectory(_ path: String) throws {
    let directory = try PlainFile.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    defer { Glibc.close(directory) }
    let (result, code) = SystemCall.retrying { fsync(directory) }
    guard result == 0 else { throw RNCryptor.Error.file(operation: "fsync", path: path, errno: code) }
  }

  func read(upTo count: Int) throws -> Data {
    var data = Data(count: count)
    let received = try data.withUnsafeMutableBytes { buffer -> Int in
      let (result, code) = SystemCall.retrying { Glibc.read(descriptor, buffer.baseAddress, count) }
      guard result >= 0 else { throw RNCryptor.Error.file(operation: "read", path: path, errno: code) }
      return result
    }
    data.count = received
    return data
  }

  func write(_ data: Data) throws {
    try data.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let (result, code) = SystemCall.retrying {
          Glibc.write(descriptor, buffer.baseAddress!.advanced(by: offset), buffer.count - offset)
        }
        guard result >= 0 else { throw RNCryptor.Error.file(operation: "write", path: path, errno: code) }
        offset += result
      }
    }
  }

  func sync() throws {
    let (result, code) = SystemCall.retrying { fsync(descriptor) }
    guard result == 0 else { throw RNCryptor.Error.file(operation: "fsync", path: path, errno: code) }
  }

  func close() {
    if descriptor >= 0 {
      Glibc.close(descriptor)
      descriptor = -1
    }
  }
}
