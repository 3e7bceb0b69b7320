import CaskCLIKit
import CipherCask
import Foundation

/// `cask import STORE FILE|-|URL --collection NAME --id-key KEY`: upserts JSON objects.
enum ImportCommand: Subcommand {
  static var spec: CommandSpec { .import }

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
    if file == "-" && arguments.flag("password-stdin") {
      throw CLIError.usage("--password-stdin cannot be used with '-': standard input carries the objects", spec)
    }
    let (input, fileSize, name) =
      try remote.map { (nil, nil, "'\(RemoteFetch.display($0))'") } ?? openInput(file)
    defer { try? input?.close() }
    let totals = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      // A URL is downloaded whole before anything is read: a failed download writes nothing.
      let body = try remote.map { try download($0, with: fetch) }
      // Prevents: objects written without the entries of indexes this command cannot compute
      // (it does not know the collection's model), which would make queries miss them.
      guard try !store.hasKeptIndexes(collection: collection) else {
        throw CLIError.failure(
          "collection '\(collection)' has secondary indexes, which cask import cannot keep; "
            + "import it with the application's importJSON(contentsOf:); nothing was written")
      }
      let session = ImportSession(store: store, path: path, inputName: name, batchSize: batchSize)
      // Ctrl-C, kill or a closed terminal: the batch under way is finished or not begun, and
      // the command says what was kept before it ends by the signal.
      return try Interruption.stoppingOnSignal { shouldContinue in
        // Started once the signals are blocked, so that the reading thread inherits their mask:
        // a signal delivered to it would end the process before the import says what it kept.
        let pipeline = objects(from: reader(body: body, input: input), prefix: prefix, idField: idField)
        defer { pipeline.stop() }
        // Started once the signals are taken: a frame on the terminal means Ctrl-C is handled.
        let counter = ProgressCounter()
        let progress = ProgressBar.start("Importing", total: body.map { UInt64($0.count) } ?? fileSize) {
          counter.current
        }
        defer { progress?.finish() }
        return try session.run(
          pipeline, progress: counter, onInterrupt: { progress?.finish() }, shouldContinue: shouldContinue)
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

  /// The JSON records of the input: the downloaded `body`, the file `input`, or standard input.
  private static func reader(body: Data?, input: FileHandle?) -> JSONRecordReader {
    var offset = 0
    return JSONRecordReader { count in
      if let body {
        let start = body.startIndex + offset
        let chunk = body[start..<min(start + count, body.endIndex)]
        offset += chunk.count
        return Data(chunk)
      }
      if let input { return try input.read(upToCount: count) ?? Data() }
      return try StandardStream.input.read(upTo: count)
    }
  }

  /// The objects of `reader` with their store keys, read, split and checked on a second
  /// thread while the caller encrypts and appends.
  private static func objects(
    from reader: JSONRecordReader, prefix: String, idField: String
  ) -> ImportPipeline<ImportSession.Object> {
    let reading = ImportReading(reader: reader)
    return ImportPipeline<ImportSession.Object> { emit in
      let reader = reading.reader
      while let record = try reader.next() {
        let key = try prefix + ImportID.of(record, field: idField, checker: reading.checker)
        guard key.utf8.count <= CaskFormat.maximumKeyLength else {
          throw CollectionError.invalidImport(reason: "the id is too long for a key", line: record.line)
        }
        let object = ImportSession.Object(record: record, key: key, bytesRead: reader.bytesConsumed)
        guard emit(object, !reader.hasBufferedInput) else { return }
      }
    }
  }

  /// What the reading thread of an import uses, handed to it whole and used by it alone
  /// until the pipeline has stopped.
  private final class ImportReading: @unchecked Sendable {
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
