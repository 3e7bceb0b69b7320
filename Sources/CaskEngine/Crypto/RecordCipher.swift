import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// Seals and opens the messages of one store with its data key: record keys, record values
/// and hint files are RNCryptor v3 key messages (options 0) under the same 64-byte key.
///
/// From format version 3 on, every plaintext begins with a one-byte tag naming its kind (key,
/// value, hint), so that no message reads as another, and a key message carries its record's
/// binding (`RecordBinding`) in front of the key. A version 2 store's messages have neither.
struct RecordCipher: Sendable {
  let keys: RNCryptor.Keys
  /// The store's record format version (2 or 3; 3 also in a store with key epochs), which
  /// decides the layout of every plaintext.
  let version: UInt16
  /// The key epoch these keys belong to (Docs/FORMAT.md, section 3a): 0 for a store's first
  /// data key, one more at each password or key change.
  let epoch: UInt32
  /// A version 5 segment's cipher: the first 4 bytes of the identity of the store that wrote
  /// the segment (its link's), little-endian, sealed in the upper half of every binding's
  /// offset field (offsets are 32-bit, so that half is 0 before version 5). A record spliced
  /// in from a copy that shares the data key then names another store. 0 before version 5.
  let bindingStamp: UInt32
  /// Whether a tombstone's key message carries the short binding (Docs/FORMAT.md, "Version 5:
  /// short tombstones"): in a version 5 store's segments, and in the cipher its writer
  /// prepares records with, which must agree on every tombstone's length.
  let shortTombstones: Bool

  init(
    keys: RNCryptor.Keys, version: UInt16 = CaskFormat.boundRecordsVersion, epoch: UInt32 = 0, bindingStamp: UInt32 = 0,
    shortTombstones: Bool = false
  ) {
    self.keys = keys
    self.version = version
    self.epoch = epoch
    self.bindingStamp = bindingStamp
    self.shortTombstones = shortTombstones && version >= CaskFormat.boundRecordsVersion
  }

  /// These keys for the segment a version 5 store with `identity` wrote.
  func stamped(identity: [UInt8]) -> RecordCipher {
    let stamp = identity.prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    return RecordCipher(keys: keys, version: version, epoch: epoch, bindingStamp: stamp, shortTombstones: true)
  }

  /// These keys with version 5's tombstones (`shortTombstones`) or without them.
  func withShortTombstones(_ short: Bool) -> RecordCipher {
    guard short != shortTombstones else { return self }
    return RecordCipher(keys: keys, version: version, epoch: epoch, bindingStamp: bindingStamp, shortTombstones: short)
  }

  /// The offset field of the binding of a record at `offset` of a segment under this cipher.
  func boundOffset(_ offset: UInt64) -> UInt64 { offset | UInt64(bindingStamp) << 32 }

  /// Whether messages are tagged and key messages carry their record's binding.
  var bindsRecords: Bool { version >= CaskFormat.boundRecordsVersion }

  /// Length of the tag in front of a value's or a hint's plaintext (0 before version 3).
  var tagLength: Int { bindsRecords ? CaskFormat.messageTagLength : 0 }

  /// The message for arbitrary bytes.
  func seal(_ plaintext: Data) throws -> Data {
    do {
      return try RNCryptor.encrypt(plaintext, keys: keys)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// The length of a key message for `count` bytes of plaintext.
  static func messageLength(plaintextLength count: Int) -> Int {
    RNCryptor.Format.messageLength(plaintextLength: count, type: .keys)
  }

  /// The length of the key message `sealKey(_:binding:into:)` writes for a key of `keyLength`
  /// bytes, in a put's record or (`delete`) a tombstone.
  func keyMessageLength(keyLength: Int, delete: Bool = false, attached: Int = 0) -> Int {
    let section = attached > 0 ? CaskFormat.attachedKeyLengthWidth + attached : 0
    return Self.messageLength(plaintextLength: bindingLength(delete: delete) + keyLength + section)
  }

  /// Whether a put's key message may carry attached keys: in a version 5 segment, and in the
  /// cipher its writer prepares records with.
  var attachesKeys: Bool { shortTombstones }

  /// The length of the binding in front of the key in a key message of a put or a delete.
  func bindingLength(delete: Bool) -> Int {
    guard bindsRecords else { return 0 }
    return delete && shortTombstones ? CaskFormat.tombstoneBindingLength : CaskFormat.keyBindingLength
  }

  /// The length of the value message `sealValue(_:forKey:into:)` writes.
  func valueMessageLength(valueLength: Int, keyLength: Int) -> Int {
    Self.messageLength(plaintextLength: tagLength + CaskFormat.valueKeyLengthPrefix + keyLength + valueLength)
  }

  /// Seals a key's UTF-8 bytes into `output`, exactly `keyMessageLength(keyLength:)` bytes;
  /// from version 3 on behind `binding` (required then, ignored before).
  func sealKey(
    _ keyBytes: UnsafeRawBufferPointer, binding: RecordBinding?, attached: [UInt8] = [],
    into output: UnsafeMutableRawBufferPointer
  ) throws {
    guard bindsRecords else {
      try seal(prefix: UnsafeRawBufferPointer(start: nil, count: 0), body: keyBytes, into: output)
      return
    }
    guard let binding else { throw CaskError.crypto("a version 3 key message needs its record's binding") }
    let layout = binding.inSegment(shortTombstones: shortTombstones)
    try withUnsafeTemporaryAllocation(byteCount: layout.encodedLength, alignment: 8) { prefix in
      layout.encode(into: prefix)
      try attached.withUnsafeBytes { section in
        try sealKey(keyBytes, encodedBinding: UnsafeRawBufferPointer(prefix), attached: section, into: output)
      }
    }
  }

  /// Seals a key's UTF-8 bytes behind a binding already encoded (`RecordBinding.encode`: 56
  /// bytes, or 22 for a version 5 tombstone) into `output`, which must be exactly the
  /// message's length. Version 3 on only.
  ///
  /// - Throws: `CaskError.crypto` when the binding or the room is not of this cipher's
  ///   layout (a record prepared for another layout is never written short of its bytes).
  func sealKey(
    _ keyBytes: UnsafeRawBufferPointer, encodedBinding: UnsafeRawBufferPointer,
    attached section: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
    into output: UnsafeMutableRawBufferPointer
  ) throws {
    let short = shortTombstones && encodedBinding.count == CaskFormat.tombstoneBindingLength
    let attaching = section.count > 0
    guard bindsRecords, short || encodedBinding.count == CaskFormat.keyBindingLength,
      !attaching || (attachesKeys && !short && keyBytes.count <= Int(UInt16.max)),
      output.count == keyMessageLength(keyLength: keyBytes.count, delete: short, attached: section.count)
    else {
      throw CaskError.crypto("a key message's binding or room does not match its segment's record layout")
    }
    guard attaching else { return try seal(prefix: encodedBinding, body: keyBytes, into: output) }
    // Tag 'A' and the key's length in front; the key and its section as one body.
    let prefixLength = encodedBinding.count + CaskFormat.attachedKeyLengthWidth
    try withUnsafeTemporaryAllocation(byteCount: prefixLength + keyBytes.count + section.count, alignment: 8) {
      buffer in
      UnsafeMutableRawBufferPointer(rebasing: buffer[0..<encodedBinding.count]).copyMemory(from: encodedBinding)
      buffer[0] = CaskFormat.messageTagAttached
      buffer.storeBytes(
        of: UInt16(keyBytes.count).littleEndian, toByteOffset: encodedBinding.count, as: UInt16.self)
      UnsafeMutableRawBufferPointer(rebasing: buffer[prefixLength..<prefixLength + keyBytes.count])
        .copyMemory(from: keyBytes)
      UnsafeMutableRawBufferPointer(rebasing: buffer[(prefixLength + keyBytes.count)...]).copyMemory(from: section)
      try seal(
        prefix: UnsafeRawBufferPointer(rebasing: buffer[0..<prefixLength]),
        body: UnsafeRawBufferPointer(rebasing: buffer[prefixLength...]), into: output)
    }
  }

  /// Seals a value bound to its key (see `sealValue(_:forKey:)`) into `output`, exactly
  /// `valueMessageLength(valueLength:keyLength:)` bytes, without assembling the plaintext.
  func sealValue(
    _ value: UnsafeRawBufferPointer, forKey keyBytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws {
    let tag = tagLength
    let prefixLength = tag + CaskFormat.valueKeyLengthPrefix
    try withUnsafeTemporaryAllocation(byteCount: prefixLength + keyBytes.count, alignment: 1) { prefix in
      if tag > 0 { prefix[0] = CaskFormat.messageTagValue }
      prefix.storeBytes(of: UInt16(keyBytes.count).littleEndian, toByteOffset: tag, as: UInt16.self)
      if keyBytes.count > 0 {
        UnsafeMutableRawBufferPointer(rebasing: prefix[prefixLength...]).copyMemory(from: keyBytes)
      }
      try seal(prefix: UnsafeRawBufferPointer(prefix), body: value, into: output)
    }
  }

  private func seal(
    prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws {
    do {
      try RNCryptor.seal(prefix: prefix, body: body, keys: keys, into: output)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// Opens a value message and checks that it belongs to `key`.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or names another key.
  func openValue(_ message: Data, forKey key: String, file: String, offset: UInt64) throws -> Data {
    try message.withUnsafeBytes { try openValue($0, forKey: key, file: file, offset: offset) }
  }

  /// Opens a value message and checks that it belongs to `key`, returning a fresh `Data`
  /// with the value alone. The key is compared inside the plaintext with `memcmp`; the
  /// plaintext is decrypted into memory that becomes the returned `Data`'s, after the value is
  /// moved down over the tag and the key. Prevents: a temporary buffer (on the heap for a
  /// 1 KiB value) and a copy of the value out of it on every get; and `Data`'s own mutating
  /// calls, which check exclusive access at run time several times each.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or names another key.
  func openValue(_ message: UnsafeRawBufferPointer, forKey key: String, file: String, offset: UInt64) throws
    -> Data
  {
    let capacity = Swift.max(1, message.count - RNCryptor.Format.keyHeaderLength - RNCryptor.Format.hmacLength)
    guard let base = malloc(capacity) else { throw CaskError.crypto("out of memory for a value") }
    let plaintext = UnsafeMutableRawBufferPointer(start: base, count: capacity)
    do {
      let length = try open(message, into: plaintext, file: file, offset: offset)
      let tag = tagLength
      guard tag == 0 || (length >= tag && plaintext[0] == CaskFormat.messageTagValue) else {
        throw CaskError.corrupt(file: file, offset: offset, reason: "message is not a value message")
      }
      let prefix = tag + CaskFormat.valueKeyLengthPrefix
      let start = IndexKey.withUTF8(of: key) { keyBytes -> Int? in
        guard length >= prefix + keyBytes.count,
          Int(plaintext[tag]) | Int(plaintext[tag + 1]) << 8 == keyBytes.count
        else { return nil }
        guard keyBytes.count == 0 || memcmp(base + prefix, keyBytes.baseAddress!, keyBytes.count) == 0 else {
          return nil
        }
        return prefix + keyBytes.count
      }
      guard let start else {
        throw CaskError.corrupt(file: file, offset: offset, reason: "value belongs to another key")
      }
      if length > start { memmove(base, base + start, length - start) }
      return Data(bytesNoCopy: base, count: length - start, deallocator: .free)
    } catch {
      free(base)
      throw error
    }
  }

  /// Opens a message into `output` (at least its ciphertext length).
  ///
  /// - Returns: the plaintext's length.
  /// - Throws: `CaskError.corrupt` when it does not authenticate or is malformed.
  func open(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, file: String, offset: UInt64)
    throws -> Int
  {
    do {
      return try RNCryptor.open(message, keys: keys, into: output)
    } catch let error as RNCryptor.Error {
      switch error {
      case .randomGeneratorFailed, .libcrypto: throw CaskError.crypto(error.description)
      default: throw CaskError.corrupt(file: file, offset: offset, reason: error.description)
      }
    }
  }

  /// Opens a message read from `file` at `offset`.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or is malformed.
  func open(_ message: Data, file: String, offset: UInt64) throws -> Data {
    do {
      return try RNCryptor.decrypt(message, keys: keys)
    } catch let error as RNCryptor.Error {
      switch error {
      case .randomGeneratorFailed, .libcrypto: throw CaskError.crypto(error.description)
      default: throw CaskError.corrupt(file: file, offset: offset, reason: error.description)
      }
    }
  }

  /// Opens a key message and checks that it holds a key `put` could have written: valid
  /// UTF-8, 1 to 65,535 bytes. (A message that authenticates is not proof of that: another
  /// implementation, or a bug, may have sealed an empty key, which trapped the index, or a
  /// longer one, which trapped the hint writer.)
  func openKey(_ message: Data, file: String, offset: UInt64) throws -> String {
    try openBoundKey(message, file: file, offset: offset).key
  }

  /// Opens a key message: the key (`openKey`'s checks) and, from version 3 on, the binding
  /// sealed in front of it.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate, is not a key message, or
  ///   holds a key `put` could not have written.
  func openBoundKey(_ message: Data, file: String, offset: UInt64) throws -> (key: String, binding: RecordBinding?) {
    let plaintext = try open(message, file: file, offset: offset)
    guard bindsRecords else { return (try Self.validKey(plaintext, file: file, offset: offset), nil) }
    guard let binding = plaintext.withUnsafeBytes({ RecordBinding.decode($0, shortTombstones: shortTombstones) }) else {
      throw CaskError.corrupt(file: file, offset: offset, reason: "message is not a key message")
    }
    return (try Self.keyAndAttachments(plaintext, file: file, offset: offset).key, binding)
  }

  /// The key of an opened key message `plaintext` read from `record` of segment `segmentID`,
  /// after checking (from version 3 on) that its binding names this very record.
  ///
  /// - Throws: `CaskError.corrupt` with the mismatch as its reason.
  func boundKey(_ plaintext: Data, of record: ScannedRecord, inSegment segmentID: UInt32, file: String) throws
    -> String
  {
    try boundKeyAndAttachments(plaintext, of: record, inSegment: segmentID, file: file).key
  }

  /// `boundKey`, with the attachment section the key message carries after the key (empty for
  /// none), checked to be well formed for that key.
  ///
  /// - Throws: `CaskError.corrupt` with the mismatch as its reason, or "malformed attached keys".
  func boundKeyAndAttachments(
    _ plaintext: Data, of record: ScannedRecord, inSegment segmentID: UInt32, file: String
  ) throws -> (key: String, attached: [UInt8]) {
    guard bindsRecords else { return (try Self.validKey(plaintext, file: file, offset: record.offset), []) }
    if let reason = bindingProblem(plaintext, of: record, inSegment: segmentID) {
      throw CaskError.corrupt(file: file, offset: record.offset, reason: reason)
    }
    return try Self.keyAndAttachments(plaintext, file: file, offset: record.offset)
  }

  /// The key and the attachment section of an opened key message whose binding was decoded.
  ///
  /// - Throws: `CaskError.corrupt` for a key `put` could not have written, or a section that
  ///   is not well formed for it.
  static func keyAndAttachments(_ plaintext: Data, file: String, offset: UInt64) throws -> (
    key: String, attached: [UInt8]
  ) {
    let malformed = CaskError.corrupt(file: file, offset: offset, reason: "malformed attached keys")
    return try plaintext.withUnsafeBytes { bytes in
      guard let ranges = RecordBinding.keyAndAttachments(in: bytes) else { throw malformed }
      let keyBytes = UnsafeRawBufferPointer(rebasing: bytes[ranges.key])
      let key = try validKey(Data(keyBytes), file: file, offset: offset)
      guard bytes.first == CaskFormat.messageTagAttached else { return (key, []) }
      let section = UnsafeRawBufferPointer(rebasing: bytes[ranges.section])
      guard AttachedKeys.isWellFormed(section, owner: keyBytes) else { throw malformed }
      return (key, Array(section))
    }
  }

  /// Why the opened key message `plaintext` of `record` is not that record's (not a key
  /// message, or sealed for another place, type, sequence, flags or value); `nil` when it is,
  /// and always before version 3. An authentic message in the wrong place is never damage:
  /// only someone who rearranged the files puts it there.
  func bindingProblem(_ plaintext: Data, of record: ScannedRecord, inSegment segmentID: UInt32) -> String? {
    guard bindsRecords else { return nil }
    guard let binding = plaintext.withUnsafeBytes({ RecordBinding.decode($0, shortTombstones: shortTombstones) }) else {
      return "message is not a key message"
    }
    return binding.mismatch(
      header: record.header, segmentID: segmentID, offset: boundOffset(record.offset), valueDigest: record.valueDigest)
  }

  /// Opens the key message of `record` of segment `segmentID` and checks its binding.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or is not this record's.
  func openKey(of record: ScannedRecord, inSegment segmentID: UInt32, file: String) throws -> String {
    try boundKey(
      open(record.keyMessage, file: file, offset: record.offset), of: record, inSegment: segmentID, file: file)
  }

  /// The key an opened key message holds; `openKey`'s checks.
  static func validKey(_ bytes: Data, file: String, offset: UInt64) throws -> String {
    guard !bytes.isEmpty else { throw CaskError.corrupt(file: file, offset: offset, reason: "key is empty") }
    guard bytes.count <= CaskFormat.maximumKeyLength else {
      throw CaskError.corrupt(
        file: file, offset: offset,
        reason: "key of \(bytes.count) bytes is longer than \(CaskFormat.maximumKeyLength)")
    }
    guard let key = String(validating: bytes, as: UTF8.self) else {
      throw CaskError.corrupt(file: file, offset: offset, reason: "key is not valid UTF-8")
    }
    return key
  }
}
