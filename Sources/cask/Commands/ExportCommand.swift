import CaskCLIKit
import CipherCask
import Foundation

/// `cask export STORE DIR [--collection NAME] [--format rncryptor|json]`.
enum ExportCommand: Subcommand {
  static var spec: CommandSpec { .export }

  /// The listing file: which file holds which key, and the SHA-256 of each file's bytes.
  struct Listing: Codable {
    struct Entry: Codable {
      var file: String
      var key: String
      var collection: String?
      var id: String?
      /// The SHA-256 of the file's bytes (for `rncryptor`, of the encrypted message), in hex;
      /// absent in version 1 listings.
      var sha256: String?
    }

    var format = "cask-export"
    var version = 2
    var encoding: String
    var entries: [Entry] = []
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let directory = arguments.argument("dir")
    let collection = arguments.option("collection")
    if let collection { _ = try KeyText.collectionPrefix(collection, spec) }
    let format = arguments.option("format") ?? "rncryptor"
    let encrypted = format == "rncryptor"
    let reuse = arguments.flag("reuse-store-password")
    if !encrypted && (PasswordSource.exportPasswordGiven(arguments) || reuse) {
      throw CLIError.usage("an export password is for --format rncryptor: the other formats are not encrypted", spec)
    }
    if reuse && PasswordSource.exportPasswordGiven(arguments) {
      throw CLIError.usage("--reuse-store-password and an export password exclude each other", spec)
    }
    if format == "jsonl" { return try runJSONLines(arguments, path: path, destination: directory) }
    if directory == "-" { throw CLIError.usage("'-' (standard output) needs --format jsonl", spec) }
    try checkDestination(directory)
    try StoreAccess.requireExisting(path)
    let password = try PasswordSource.password(arguments, subject: "store '\(path)'")
    let store = try StoreAccess.open(path, password: password, options: StoreAccess.options(.readOnly))
    // Asked once the store opened, so that a wrong store password is told first. Files under
    // the store's password would test it at PBKDF2's 10,000 rounds, far cheaper than the
    // store's scrypt header, and the password found opens the store: only on request.
    let exportPassword: String?
    do {
      exportPassword = try encrypted && !reuse ? PasswordSource.exportPassword(arguments, required: true) : nil
    } catch {
      try? store.close()
      throw error
    }
    if reuse {
      StandardStream.error.write(
        "warning: the files are encrypted under the store's password with RNCryptor's PBKDF2 (10,000 rounds): "
          + "whoever gets them can test guesses at that password far faster than against the store\n")
    }
    let regions = store.stats().recovery.corruptRegions
    let unreadable = store.stats().recovery.unreadableSegments
    let summary = try StoreAccess.run(store) { store in
      let keys = try collection.map { try store.keys(inGroup: $0) } ?? store.keys()
      if let collection, keys.isEmpty {
        throw CLIError.failure("store '\(path)' has no collection '\(collection)'")
      }
      let files = try ExportFiles(directory: directory, encryptedWith: encrypted ? exportPassword ?? password : nil)
      // Ctrl-C, kill or a closed terminal: the files go too, then the process ends by the signal.
      return try Interruption.cleaningUp({ files.removeAll(keepingLock: true) }) {
        do {
          return try export(
            keys, of: store, to: files, encrypted: encrypted, skippingDamaged: arguments.flag("skip-damaged"))
        } catch {
          files.removeAll()
          throw error
        }
      }
    }
    let (count, listingName, nonJSON, skipped) = summary
    // Names escaped as in failures: a line break or an escape in a path stays one line.
    let named = MessageText.quoted(path)
    let source = collection.map { "collection \(MessageText.quoted($0)) of store \(named)" } ?? "store \(named)"
    let folder = MessageText.quoted(directory)
    if arguments.flag("json") {
      try JSONOutput.write(
        Reports.Export(
          store: path, collection: collection, destination: directory, format: format, values: count,
          skipped: Reports.skipped(skipped)))
    } else if encrypted {
      StandardStream.output.write(
        "Exported \(counted(count, "value")) of \(source) to \(folder) as RNCryptor v3 files"
          + (exportPassword == nil ? " under the store's password" : " under the export password")
          + "; \(listingName) (encrypted too) maps the file names to keys.\n")
    } else {
      StandardStream.output.write(
        "Exported \(counted(count, "value")) of \(source) to \(folder) as plaintext files; \(listingName) maps them to keys"
          + (nonJSON > 0
            ? " (\(counted(nonJSON, "value")) that \(nonJSON == 1 ? "is" : "are") not JSON \(nonJSON == 1 ? "was" : "were") written as .bin files).\n"
            : ".\n"))
    }
    if !encrypted {
      StandardStream.error.write(
        "warning: the files in \(folder) are NOT encrypted: anyone who can read them can read the data\n")
    }
    guard arguments.flag("skip-damaged") else { return }
    let lost = DamageList.lines(skipped: skipped, regions: regions, unreadable: unreadable)
    for line in lost { StandardStream.error.write(line + "\n") }
    if !lost.isEmpty {
      throw CLIError.failure(
        "store '\(path)' is damaged: \(counted(lost.count, "damaged place")) left out of the export (listed above)")
    }
  }

  /// Writes the value of every key in `keys` and the listing.
  ///
  /// Encrypted files are written in a random order: their names are random, and files
  /// created in key order would give the order away through their inode numbers and times.
  /// The listing is in key order.
  private static func export(
    _ keys: [String], of store: CaskStore, to files: ExportFiles, encrypted: Bool, skippingDamaged: Bool
  ) throws -> (Int, String, Int, [DamageList.Value]) {
    var skipped: [DamageList.Value] = []
    let counter = ProgressCounter()
    let progress = ProgressBar.start("Exporting", total: UInt64(keys.count), unit: .items("values")) {
      counter.current
    }
    defer { progress?.finish() }
    var listing = Listing(encoding: encrypted ? "rncryptor" : "json")
    for key in encrypted ? keys.shuffled() : keys {
      let read: Data?
      do {
        read = try store.get(key)
      } catch CaskError.corrupt(let file, let offset, let reason) where skippingDamaged {
        skipped.append(DamageList.Value(file: (file as NSString).lastPathComponent, offset: offset, reason: reason))
        counter.add(1)
        continue
      }
      guard let value = read else { continue }
      let (name, digest) = try files.write(value)
      let separator = key.utf8.firstIndex(of: 0)
      listing.entries.append(
        Listing.Entry(
          file: name, key: key, collection: separator.map { String(key[..<$0]) },
          id: separator.map { String(key[key.index(after: $0)...]) }, sha256: digest))
      counter.add(1)
    }
    if encrypted { listing.entries.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let listingName = try files.writeListing(encoder.encode(listing))
    return (listing.entries.count, listingName, files.nonJSONValues, skipped)
  }

  /// `--format jsonl`: the lines to standard output or a new file.
  private static func runJSONLines(_ arguments: ParsedArguments, path: String, destination: String) throws {
    let collection = arguments.option("collection")
    if destination != "-" && FileManager.default.fileExists(atPath: destination) {
      throw CLIError.failure("'\(destination)' already exists")
    }
    try StoreAccess.requireExisting(path)
    let password = try PasswordSource.password(arguments, subject: "store '\(path)'")
    let store = try StoreAccess.open(path, password: password, options: StoreAccess.options(.readOnly))
    let recovery = store.stats().recovery
    let (count, skipped) = try StoreAccess.run(store) { store in
      let keys = try collection.map { try store.keys(inGroup: $0) } ?? store.keys()
      if let collection, keys.isEmpty {
        throw CLIError.failure("store '\(path)' has no collection '\(collection)'")
      }
      return try JSONLinesExport.run(
        keys, of: store, to: destination, collection: collection, skippingDamaged: arguments.flag("skip-damaged"))
    }
    let named = MessageText.quoted(path)
    let source = collection.map { "collection \(MessageText.quoted($0)) of store \(named)" } ?? "store \(named)"
    // Standard output carries the lines: the report goes to standard error then.
    let report =
      "Exported \(counted(count, "value")) of \(source) to "
      + (destination == "-" ? "standard output" : MessageText.quoted(destination)) + " as JSON Lines.\n"
    if arguments.flag("json") {
      let document = Reports.Export(
        store: path, collection: collection, destination: destination, format: "jsonl", values: count,
        skipped: Reports.skipped(skipped))
      // Standard output carries the lines when DEST is '-': the document goes to standard error.
      if destination == "-" {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        StandardStream.error.write(try encoder.encode(document) + Data("\n".utf8))
      } else {
        try JSONOutput.write(document)
      }
    } else {
      (destination == "-" ? StandardStream.error : StandardStream.output).write(report)
    }
    if destination != "-" {
      StandardStream.error.write(
        "warning: \(MessageText.quoted(destination)) is NOT encrypted: anyone who can read it can read the data\n")
    } else if StandardStream.output.isTerminal {
      StandardStream.error.write(
        "warning: the lines above are NOT encrypted: the terminal shows the data in plaintext\n")
    }
    guard arguments.flag("skip-damaged") else { return }
    let lost = DamageList.lines(
      skipped: skipped, regions: recovery.corruptRegions, unreadable: recovery.unreadableSegments)
    for line in lost { StandardStream.error.write(line + "\n") }
    if !lost.isEmpty {
      throw CLIError.failure(
        "store '\(path)' is damaged: \(counted(lost.count, "damaged place")) left out of the export (listed above)")
    }
  }

  /// DIR must not exist or be an empty directory.
  private static func checkDestination(_ directory: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    guard isDirectory.boolValue, contents.isEmpty else {
      throw CLIError.failure("'\(directory)' already exists and is not an empty directory")
    }
  }
}
