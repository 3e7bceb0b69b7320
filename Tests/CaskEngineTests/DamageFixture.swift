import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// One record of a segment file as a damage test sees it: where it lies and what it holds.
struct RecordSpan: Equatable {
  var offset: Int
  var length: Int
  var endsBatch: Bool
  var key: String

  var end: Int { offset + length }
}

/// A small store written once and copied for each kind of damage, with the layout of its files
/// (segments in history order, each one's records) so a test knows what every byte belongs to.
struct DamageFixture {
  static let password = "damage-fixture-pw"
  static let options: CaskStore.Options = {
    var options = CaskStore.Options(
      durability: .never, segmentSizeLimit: 4096, autoCompaction: nil, fileSystem: UnsyncedFileSystem())
    options.keyDerivation = testKeyDerivation
    return options
  }()

  /// Raw keys open the store without PBKDF2, which keeps hundreds of opens quick; `nil`
  /// when the fixture was made with `password`.
  let keys: RNCryptor.Keys?
  let directory: TemporaryDirectory
  /// The undamaged store; tests damage copies of it.
  let pristine: String
  /// Every key written (each exactly once) and its value.
  let values: [String: Data]
  /// How the fixture's store is opened (`options` with the fixture's segment size limit).
  let storeOptions: CaskStore.Options
  /// Segment file names, oldest first.
  let segments: [String]
  /// The records of each segment file, in file order.
  let records: [String: [RecordSpan]]

  /// Writes `singles` one-record batches, then one batch per element of `batches` (of that
  /// many puts), with unique keys, and closes the store (so every segment has a hint).
  init(
    _ label: String, singles: Int, batches: [Int] = [], valueLength: ClosedRange<Int> = 150...400,
    segmentSizeLimit: UInt64 = Self.options.segmentSizeLimit, withPassword: Bool = false,
    formatVersion: UInt16 = CaskFormat.formatVersion
  ) throws {
    directory = try TemporaryDirectory(label)
    pristine = directory.file("pristine.cask")
    keys = withPassword ? nil : try RNCryptor.Keys.random()
    var options = Self.options
    options.segmentSizeLimit = segmentSizeLimit
    options.newStoreFormatVersion = formatVersion
    storeOptions = options
    var random = SeededRandom(seed: 0xC0FF_EE00 + UInt64(singles))
    var values: [String: Data] = [:]
    let store = try Self.open(pristine, keys: keys, options: options, readOnly: false)
    func value(for key: String) -> Data {
      let length = Int.random(in: valueLength, using: &random)
      return Data("value of \(key): ".utf8) + random.bytes(length)
    }
    for index in 0..<singles {
      let key = "single-\(index)"
      values[key] = value(for: key)
      try store.put(values[key]!, forKey: key)
    }
    for (number, size) in batches.enumerated() {
      let keys = (0..<size).map { "batch-\(number)-\($0)" }
      for key in keys { values[key] = value(for: key) }
      try store.batch { batch in
        for key in keys { try batch.put(values[key]!, forKey: key) }
      }
    }
    try store.close()
    self.values = values
    segments = try Self.segmentNames(in: pristine)
    var records: [String: [RecordSpan]] = [:]
    for name in segments {
      records[name] = try Self.records(ofSegment: "\(pristine)/\(name)", cipher: store.cipher)
    }
    self.records = records
  }

  func remove() { directory.remove() }

  /// Opens a copy of the store with the fixture's credential.
  func open(_ path: String, readOnly: Bool = false) throws -> CaskStore {
    try Self.open(path, keys: keys, options: storeOptions, readOnly: readOnly)
  }

  private static func open(_ path: String, keys: RNCryptor.Keys?, options: CaskStore.Options, readOnly: Bool) throws
    -> CaskStore
  {
    var options = options
    options.readOnly = readOnly
    guard let keys else { return try CaskStore(path: path, password: password, options: options) }
    return try CaskStore(path: path, keys: keys, options: options)
  }

  /// A fresh copy of the pristine store, named `label`, to damage.
  func copy(_ label: String) throws -> String {
    let path = directory.file(label)
    try FileManager.default.copyItem(atPath: pristine, toPath: path)
    return path
  }

  /// The keys whose records lie in `segment`.
  func keys(in segment: String) -> Set<String> {
    Set(records[segment, default: []].map(\.key))
  }

  /// The record of `segment` that holds byte `offset`.
  func record(in segment: String, holding offset: Int) -> RecordSpan? {
    records[segment, default: []].first { $0.offset <= offset && offset < $0.end }
  }

  // MARK: Files of a store

  /// Segment file names, in id order (which is history order for stores that never compacted).
  static func segmentNames(in path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path)
      .filter { $0.hasSuffix("." + CaskFormat.segmentExtension) }.sorted()
  }

  /// The hint file name that belongs to a segment file name.
  static func hintName(of segment: String) -> String {
    String(segment.dropLast(CaskFormat.segmentExtension.count)) + CaskFormat.hintExtension
  }

  /// Parses an undamaged segment file record by record, decrypting each key.
  static func records(ofSegment path: String, cipher: RecordCipher) throws -> [RecordSpan] {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    var spans: [RecordSpan] = []
    // A version 5 segment's records start after its link.
    let linked = bytes.count >= 10 && bytes[bytes.startIndex + 8] == UInt8(CaskFormat.authenticatedVersion)
    var offset = Int(Segment.recordsStart(linked: linked))
    while offset < bytes.count {
      let start = bytes.startIndex + offset
      let header = try #require(bytes[start...].withUnsafeBytes { RecordHeader.parse($0) })
      let keyStart = start + CaskFormat.recordHeaderLength
      let key = try cipher.openKey(
        Data(bytes[keyStart..<keyStart + Int(header.keyLength)]), file: path, offset: UInt64(offset))
      spans.append(RecordSpan(offset: offset, length: header.totalLength, endsBatch: header.endsBatch, key: key))
      offset += header.totalLength
    }
    try #require(offset == bytes.count)
    return spans
  }

  /// Every file of a directory and its bytes.
  static func snapshot(_ path: String) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      files[name] = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
    }
    return files
  }
}

extension CorruptRegion {
  /// Whether the region covers byte `offset` of `file` (a region of zero length, its start).
  func covers(_ file: String, _ offset: Int) -> Bool {
    self.file == file && UInt64(offset) >= self.offset && UInt64(offset) < self.offset + max(1, length)
  }
}

/// Checks that `key` is served correctly or visibly lost: its value, `nil`, or
/// `CaskError.corrupt`, never other bytes.
func expectNeverWrong(
  _ store: CaskStore, _ key: String, _ expected: Data, sourceLocation: SourceLocation = #_sourceLocation
) {
  do {
    let value = try store.get(key)
    #expect(value == nil || value == expected, "a damaged record returned other bytes", sourceLocation: sourceLocation)
  } catch let error as CaskError {
    guard case .corrupt = error else {
      Issue.record("reading a damaged record threw \(error), not .corrupt", sourceLocation: sourceLocation)
      return
    }
  } catch {
    Issue.record("reading a damaged record threw \(error)", sourceLocation: sourceLocation)
  }
}

/// Checks that every key outside `damaged` reads back exactly, and no key in it reads back wrong.
func expectServes(
  _ store: CaskStore, _ values: [String: Data], except damaged: Set<String>,
  sourceLocation: SourceLocation = #_sourceLocation
) throws {
  for (key, value) in values {
    if damaged.contains(key) {
      expectNeverWrong(store, key, value, sourceLocation: sourceLocation)
    } else {
      #expect(try store.get(key) == value, "undamaged record \(key) not served", sourceLocation: sourceLocation)
    }
  }
}

/// The real file system with every sync skipped. Damage tests change files by hand between
/// clean closes and never crash, so durability is not what they test; skipping `fsync` keeps
/// their hundreds of opens quick.
final class UnsyncedFileSystem: ForwardingFileSystem, @unchecked Sendable {
  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    UnsyncedFile(try super.open(path, mode: mode))
  }

  override func syncDirectory(_ path: String) throws {}
}

/// A file whose `sync()` does nothing.
final class UnsyncedFile: ForwardingStorageFile, @unchecked Sendable {
  override func sync() throws {}
}

extension CaskStore.Options {
  /// These options, creating a version 2 store: for tests that cut or grow a closed store's
  /// segments to stand for a crash or for damage. In a version 3 store the manifest makes
  /// that an integrity violation (TamperDetectionTests, ManifestTests); crashes there are
  /// played by the fault file systems instead.
  var creatingVersion2: CaskStore.Options {
    var options = self
    options.newStoreFormatVersion = 2
    return options
  }
}
