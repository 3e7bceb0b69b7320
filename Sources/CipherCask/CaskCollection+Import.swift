import Foundation

/// How far a streamed import has come.
public struct ImportProgress: Sendable, Equatable {
  /// Objects read, decoded and added to the import's batch so far.
  public var objects: Int
  /// Bytes of the input read so far.
  public var bytesRead: UInt64
  /// The input's size, when known.
  public var totalBytes: UInt64?

  public init(objects: Int, bytesRead: UInt64, totalBytes: UInt64?) {
    self.objects = objects
    self.bytesRead = bytesRead
    self.totalBytes = totalBytes
  }
}

extension CaskCollection {
  /// How many objects an import inserted and how many it replaced.
  public struct ImportResult: Sendable, Equatable {
    public var inserted: Int
    public var replaced: Int

    public init(inserted: Int, replaced: Int) {
      self.inserted = inserted
      self.replaced = replaced
    }
  }

  /// Upserts the objects of a JSON array in one atomic batch.
  ///
  /// For the events of a Core Data events example, pass a decoder with `.convertFromSnakeCase` keys and `.iso8601`
  /// dates. An id that appears twice counts once, as inserted or replaced by its first
  /// occurrence; the last occurrence is stored.
  ///
  /// - Throws: `CollectionError.invalidImport` for malformed JSON, objects that do not decode as `T`
  ///   or that the collection's coder cannot write (nothing is written).
  @discardableResult
  public func importJSON(_ data: Data, decoder: JSONDecoder = JSONDecoder()) throws -> ImportResult {
    try checkName()
    let objects: [T]
    do {
      objects = try decoder.decode([T].self, from: data)
    } catch {
      let located = ImportDateLocation.located(error, decoding: [T].self, from: data, with: decoder)
      throw CollectionError.invalidImport(reason: CollectionError.summary(of: located), line: nil)
    }
    do {
      return try upsert(objects)
    } catch let error as EncodingError {
      throw CollectionError.invalidImport(reason: CollectionError.summary(of: error), line: nil)
    }
  }

  /// Upserts the objects of a JSON array or JSON Lines file in one atomic batch, reading the
  /// file as a stream.
  ///
  /// The file is either one JSON array of objects (its first non-blank character is `[`) or
  /// JSON Lines, one object per line (blank lines skipped, LF or CR LF); a UTF-8 byte order
  /// mark is skipped. Each object is decoded with `decoder` and encoded with the collection's
  /// coder and appended to the store's log as soon as it is read (a streamed batch,
  /// `CaskStore.streamedBatch(_:)`), so what the import holds is the location of each key it
  /// wrote (and the index values of each object, for a collection with declared indexes),
  /// never the file's text, the decoded objects or their encrypted values. Nothing is visible
  /// until the batch commits, and nothing of it is written, or visible after a crash, if
  /// anything fails. Other writers of the store wait until the import has committed.
  /// Counting as `importJSON(_:decoder:)` does.
  ///
  /// - Parameters:
  ///   - url: a file URL.
  ///   - decoder: how the objects are decoded (`.convertFromSnakeCase`, `.iso8601`, ...).
  ///   - maximumObjectLength: the longest object (or line) read, in bytes; a longer one is an
  ///     error, so that a file without line breaks is not read into memory whole.
  ///   - progress: called after each object; it must not write to this store (it runs with
  ///     the store's writer held: such a write throws `CaskError.reentrantCall`).
  /// - Throws: `CollectionError.invalidImport` with the line an object starts on for a
  ///   malformed object, one that does not decode as `T` (its array position is in the reason
  ///   for an array), one that the coder cannot write, or one longer than
  ///   `maximumObjectLength`; `CollectionError.uniqueViolation`; `CaskError` from the store;
  ///   the file's read errors. Nothing is written.
  /// - Complexity: O(n) decodes, encodes and encryptions for the n objects, one streamed
  ///   batch; memory O(n) for their keys (about 40 bytes a key, plus the key's bytes over 16)
  ///   plus one object of the input and one megabyte of records.
  @discardableResult
  public func importJSON(
    contentsOf url: URL, decoder: JSONDecoder = JSONDecoder(),
    maximumObjectLength: Int = 64 << 20, progress: ((ImportProgress) -> Void)? = nil
  ) throws -> ImportResult {
    try importJSON(
      contentsOf: url, decoder: decoder, maximumObjectLength: maximumObjectLength, cancelled: nil,
      progress: progress)
  }

  func importJSON(
    contentsOf url: URL, decoder: JSONDecoder, maximumObjectLength: Int, cancelled: CancellationFlag?,
    progress: ((ImportProgress) -> Void)?
  ) throws -> ImportResult {
    try checkName()
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    let total = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.uint64Value
    let reader = JSONRecordReader(maximumObjectLength: maximumObjectLength) { count in
      try handle.read(upToCount: count) ?? Data()
    }
    let objectDecoder = ImportObjectDecoder(decoder)
    let producer = ImportProducer(reader: reader, decoder: objectDecoder)
    return try store.streamedBatch { batch in
      // Reading, decoding and encoding on a second thread; encrypting and appending here.
      let pipeline = ImportPipeline<ImportedObject> { [self] emit in
        try store.runningForStreamedBatch {
          let reader = producer.reader
          while let record = try reader.next() {
            let object = try decodeImported(record, format: reader.format, decoder: producer.decoder)
            let value: Data
            do {
              value = try encode(object)
            } catch let error as EncodingError {
              throw CollectionError.invalidImport(
                reason: Self.place(of: record, in: reader.format) + CollectionError.summary(of: error),
                line: record.line)
            }
            let item = ImportedObject(key: try key(for: object.id), value: value, bytesRead: reader.bytesConsumed)
            guard emit(item, !reader.hasBufferedInput) else { return }
          }
        }
      }
      defer { pipeline.stop() }
      var tally = UpsertTally()
      var objects = 0
      while let item = try pipeline.next() {
        if cancelled?.isSet == true { throw CancellationError() }
        try batch.upsert(item.value, forKey: item.key, counting: &tally)
        objects += 1
        progress?(ImportProgress(objects: objects, bytesRead: item.bytesRead, totalBytes: total))
      }
      return ImportResult(inserted: tally.inserted, replaced: tally.replaced)
    }
  }

  private func decodeImported(
    _ record: JSONRecord, format: JSONRecordReader.Format?, decoder: ImportObjectDecoder
  ) throws -> T {
    do {
      return try decoder.decode(T.self, from: record.bytes)
    } catch {
      let located = decoder.locatingDate(error, decoding: T.self, from: record.bytes)
      throw CollectionError.invalidImport(
        reason: Self.place(of: record, in: format) + CollectionError.summary(of: located), line: record.line)
    }
  }

  /// "element N: " for an object of an array (the line alone does not tell two objects of one
  /// line apart); nothing for JSON Lines, where the line is the object's place.
  private static func place(of record: JSONRecord, in format: JSONRecordReader.Format?) -> String {
    format == .array ? "element \(record.position): " : ""
  }
}

/// One object of a streamed import, ready to append: its key, its encoded value, and how far
/// into the input it was read.
struct ImportedObject {
  var key: String
  var value: Data
  var bytesRead: UInt64
}

/// What the decoding thread of an import uses; handed to that thread whole, and used by it
/// alone until the import's pipeline has stopped.
final class ImportProducer: @unchecked Sendable {
  let reader: JSONRecordReader
  let decoder: ImportObjectDecoder

  init(reader: JSONRecordReader, decoder: ImportObjectDecoder) {
    self.reader = reader
    self.decoder = decoder
  }
}
