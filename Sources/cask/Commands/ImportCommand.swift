import CaskCLIKit
import CipherCask
import Foundation

/// `cask import STORE FILE|-|URL --collection NAME --id-key KEY`: upserts JSON objects.
enum ImportCommand: Subcommand {
  static var spec: CommandSpec { .import }

  struct Totals {
    var objects = 0
    var inserted = 0
    var replaced = 0
    /// The input line of the last object written (for an array, the line it starts on).
    var throughLine = 0
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let file = arguments.argument("file")
    let collection = arguments.requiredOption("collection")
    let prefix = try KeyText.collectionPrefix(collection, spec)
    let idField = arguments.requiredOption("id-key")
    // Without --batch-size the whole input is one atomic batch: an error anywhere writes nothing.
    let batchSize = try arguments.positiveInteger("batch-size") ?? Int.max
    let remote = RemoteFetch.isURL(file) ? try RemoteFetch.url(file, argument: "file", spec: spec) : nil
    if remote == nil && RemoteHeaders.anyGiven(arguments) {
      throw CLIError.usage(
        "--header and --header-file are for downloads: <file> is not an http:// or https:// URL", spec)
    }
    let fetch = try remote.map { _ in try RemoteFetch(arguments) }
    let fromStdin = file == "-"
    if fromStdin && arguments.flag("password-stdin") {
      throw CLIError.usage("--password-stdin cannot be used with '-': standard input carries the objects", spec)
    }
    let (input, fileSize, name) =
      try remote.map { (nil, nil, "'\(RemoteFetch.display($0))'") } ?? openInput(file)
    defer { try? input?.close() }
    let totals = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      // A URL is downloaded whole before anything is read: a failed download writes nothing.
      let body = try remote.map { try download($0, with: fetch) }
      var offset = 0
      let reader = JSONRecordReader { count in
        if let body {
          let start = body.startIndex + offset
          let chunk = body[start..<min(start + count, body.endIndex)]
          offset += chunk.count
          return Data(chunk)
        }
        if let input { return try input.read(upToCount: count) ?? Data() }
        return try StandardStream.input.read(upTo: count)
      }
      // Prevents: objects written without the entries of indexes this command cannot compute
      // (it does not know the collection's model), which would make queries miss them.
      guard try !store.hasKeptIndexes(collection: collection) else {
        throw CLIError.failure(
          "collection '\(collection)' has secondary indexes, which cask import cannot keep; "
            + "import it with the application's importJSON(contentsOf:); nothing was written")
      }
      var totals = Totals()
      /// Objects of the batch under way (not committed).
      var pending = 0
      var batchLine = 1
      /// What is in the store after a stop, so that the import can be resumed.
      func kept() -> String {
        totals.objects == 0
          ? "nothing was written"
          : "\(counted(totals.objects, "object")) \(totals.objects == 1 ? "was" : "were") imported, through line \(totals.throughLine) of \(name); "
            + "nothing after that line was written"
      }
      // Ctrl-C, kill or a closed terminal: the batch under way is finished or not begun, and
      // the command says what was kept before it ends by the signal.
      return try Interruption.stoppingOnSignal { shouldContinue in
        // Reading, splitting and checking on a second thread; encrypting and appending here.
        // Started once the signals are blocked, so that the thread inherits their mask: a
        // signal delivered to it would end the process before the import says what it kept.
        let reading = ImportReading(reader: reader)
        let pipeline = ImportPipeline<ImportReading.Object> { emit in
          let reader = reading.reader
          while let record = try reader.next() {
            let key = try prefix + ImportID.of(record, field: idField, checker: reading.checker)
            guard key.utf8.count <= CaskFormat.maximumKeyLength else {
              throw CollectionError.invalidImport(reason: "the id is too long for a key", line: record.line)
            }
            let object = ImportReading.Object(record: record, key: key, bytesRead: reader.bytesConsumed)
            guard emit(object, !reader.hasBufferedInput) else { return }
          }
        }
        defer { pipeline.stop() }
        // Started once the signals are taken: a frame on the terminal means Ctrl-C is handled.
        let total = body.map { UInt64($0.count) } ?? fileSize
        let counter = ProgressCounter()
        let progress = ProgressBar.start("Importing", total: total) { counter.current }
        defer { progress?.finish() }
        func interrupted() -> Totals {
          progress?.finish()
          StandardStream.error.write("Interrupted: \(kept()).\n")
          return totals
        }
        do {
          var finished = false
          while !finished {
            // One streamed batch per --batch-size objects (all of them without it): each
            // object is appended as it is read, and none is visible until its batch commits.
            let (tally, lastLine, atEnd) = try store.streamedBatch { batch -> (UpsertTally, Int, Bool) in
              var tally = UpsertTally()
              var lastLine = 0
              while let object = try pipeline.next() {
                guard shouldContinue() else { throw ImportInterrupted() }
                let record = object.record
                if pending == 0 { batchLine = record.line }
                try batch.upsert(record.bytes, forKey: object.key, counting: &tally)
                pending += 1
                lastLine = record.line
                counter.set(object.bytesRead)
                if pending == batchSize { return (tally, lastLine, false) }
              }
              guard shouldContinue() else { throw ImportInterrupted() }
              return (tally, lastLine, true)
            }
            totals.inserted += tally.inserted
            totals.replaced += tally.replaced
            totals.objects += pending
            if pending > 0 { totals.throughLine = lastLine }
            pending = 0
            finished = atEnd
          }
        } catch is ImportInterrupted {
          return interrupted()
        } catch CollectionError.invalidImport(let reason, let line) {
          let place = line.map { "line \($0) of \(name)" } ?? name
          // With no object pending, the batches so far are all in: nothing is lost before the error.
          let from = pending == 0 ? (line ?? batchLine) : batchLine
          let kept =
            totals.objects == 0
            ? "nothing was written"
            : "the \(counted(totals.objects, "object")) before line \(from) \(totals.objects == 1 ? "was" : "were") imported, "
              + "nothing from that line on"
          throw CLIError.failure("invalid import at \(place): \(reason); \(kept)")
        } catch let error as CaskError {
          // Prevents: a full disk naming the errno but not how much of the input is in.
          throw CLIError.failure("\(ErrorMessage.describe(error, store: path)); \(kept())")
        }
        return totals
      }
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Reports.Upsert(
          store: path, collection: collection, source: file == "-" ? "-" : remote.map(RemoteFetch.display) ?? file,
          objects: totals.objects, inserted: totals.inserted, replaced: totals.replaced))
    }
    StandardStream.output.write(
      "Imported \(counted(totals.objects, "object")) into collection '\(collection)' of store '\(path)': "
        + "\(totals.inserted) inserted, \(totals.replaced) replaced.\n")
  }

  /// Thrown inside a batch to abort it when a signal asks the import to stop.
  private struct ImportInterrupted: Error {}

  /// What the reading thread of an import uses, handed to it whole and used by it alone
  /// until the pipeline has stopped.
  private final class ImportReading: @unchecked Sendable {
    /// One object read and checked, with its store key and how far into the input it ends.
    struct Object {
      var record: JSONRecord
      var key: String
      var bytesRead: UInt64
    }

    let reader: JSONRecordReader
    let checker = StrictJSONChecker()

    init(reader: JSONRecordReader) {
      self.reader = reader
    }
  }

  /// Upserts one batch atomically, counting ids new to the store as inserted. An id that
  /// appears twice in a batch counts once; its last object is stored.
  static func write(_ batch: [(key: String, value: Data)], to store: CaskStore) throws -> (inserted: Int, replaced: Int)
  {
    try store.transaction { transaction in
      var tally = UpsertTally()
      for (key, value) in batch { try transaction.upsert(value, forKey: key, counting: &tally) }
      return (tally.inserted, tally.replaced)
    }
  }

  /// The body of `url`, with a spinner on a terminal while it comes.
  ///
  /// - Throws: `CLIError.failure` naming the URL (without its query), never a header value.
  private static func download(_ url: URL, with fetch: RemoteFetch?) throws -> Data {
    let progress = ProgressBar.start("Downloading", total: nil, unit: .time) { 0 }
    defer { progress?.finish() }
    guard let fetch else { throw CLIError.failure("cannot download '\(RemoteFetch.display(url))'") }
    return try fetch.get(url, doing: "cannot download")
  }

  /// The input file (nil for standard input), its size when known, and its name for messages.
  private static func openInput(_ file: String) throws -> (FileHandle?, UInt64?, String) {
    guard file != "-" else { return (nil, nil, "standard input") }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
      throw CLIError.failure("'\(file)' does not exist")
    }
    guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: file) else {
      throw CLIError.failure("cannot read '\(file)'")
    }
    return (handle, FileTransfer.size(of: file), "'\(file)'")
  }
}
