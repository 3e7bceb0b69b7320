import CaskCLIKit
import CipherCask
import Foundation

/// Opening stores for the subcommands, with the same checks, messages and warnings for all.
///
/// Only `create` and `demo` make new stores: every other command opens with
/// `createIfMissing: false` and says so when the store does not exist, so a mistyped path
/// never becomes an empty store under a password typed once.
enum StoreAccess {
  enum Mode {
    /// A shared lock: other read-only commands may run at the same time.
    case readOnly
    /// An exclusive lock.
    case readWrite
  }

  /// Options for a short-lived command: no background compaction (`cask compact` does it
  /// on request), every write synced.
  static func options(_ mode: Mode, create: Bool = false) -> CaskStore.Options {
    CaskStore.Options(
      durability: .always, autoCompaction: nil, createIfMissing: create, readOnly: mode == .readOnly)
  }

  /// Fails, before any password is asked for, unless `path` is a store directory.
  static func requireExisting(_ path: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CLIError.failure("store '\(path)' does not exist (make one with 'cask create \(path)')")
    }
    guard isDirectory.boolValue,
      FileManager.default.fileExists(atPath: "\(path)/\(CaskFormat.headerFileName)")
    else {
      throw CLIError.failure("'\(path)' is not a CipherCask store")
    }
  }

  /// Opens an existing store with the password from the usual sources.
  static func open(_ path: String, _ arguments: ParsedArguments, mode: Mode) throws -> CaskStore {
    try requireExisting(path)
    let password = try PasswordSource.password(arguments, subject: "store '\(path)'")
    return try open(path, password: password, options: options(mode))
  }

  /// Opens (or creates, as `options` say) a store, describing failures with its path and
  /// warning on standard error when opening had to repair damage.
  static func open(_ path: String, password: String, options: CaskStore.Options) throws -> CaskStore {
    let store: CaskStore
    do {
      store = try CaskStore(path: path, password: password, options: options)
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, store: path))
    }
    let recovery = store.stats().recovery
    if !recovery.isClean {
      // A read-only open works around the damage in memory and changes no file: saying
      // "repaired" there sent users away believing the next command would find it fixed.
      // Only a torn tail or an unfinished batch is repaired by a writable open (cut); damaged
      // regions and unreadable segments stay as they are, and say so.
      let repaired = !options.readOnly && (recovery.truncatedBytes > 0 || recovery.droppedRecords > 0)
      let what =
        options.readOnly
        ? "is damaged (opened read-only: nothing was repaired)"
        : repaired ? "was damaged and repaired when opened" : "is damaged"
      StandardStream.error.write(
        "warning: store \(MessageText.quoted(path)) \(what) (\(RecoverySummary(recovery, readOnly: options.readOnly))); "
          + "run 'cask verify \(MessageText.escaped(path))'\n")
    }
    return store
  }

  /// Opens an existing store, runs `body` and closes the store; store errors thrown by `body`
  /// or by closing are described with the store's path.
  static func withStore<R>(
    _ path: String, _ arguments: ParsedArguments, mode: Mode, _ body: (CaskStore) throws -> R
  ) throws -> R {
    let store = try open(path, arguments, mode: mode)
    return try run(store, body)
  }

  /// Runs `body` with an open store and closes it, whatever happens.
  static func run<R>(_ store: CaskStore, _ body: (CaskStore) throws -> R) throws -> R {
    let result: R
    do {
      result = try body(store)
    } catch let error as CLIError {
      try? store.close()
      throw error
    } catch {
      try? store.close()
      throw CLIError.failure(ErrorMessage.describe(error, store: store.path))
    }
    // Prevents: a write reported as failed that was applied. Every write of `body` was
    // synced before it returned (`durability: .always`), so what fails after it (a hint,
    // the manifest, closing) costs none of it: a warning, not a failure.
    do {
      try store.close()
    } catch {
      warn(store.path, "closing it failed after the command's work was synced: \(ErrorMessage.describe(error))")
    }
    if let failure = store.backgroundWriteFailure {
      warn(store.path, BackgroundWriteWarning.message(for: failure))
    }
    return result
  }

  /// One warning line about the store at `path` on standard error.
  static func warn(_ path: String, _ message: String) {
    StandardStream.error.write("warning: store \(MessageText.quoted(path)): \(MessageText.escaped(message))\n")
  }
}

/// A short account of a `RecoveryReport`, without keys or values.
struct RecoverySummary: CustomStringConvertible {
  let report: RecoveryReport
  /// Whether the open was read-only, which cuts nothing: the tail is then left unread.
  let readOnly: Bool

  init(_ report: RecoveryReport, readOnly: Bool) {
    self.report = report
    self.readOnly = readOnly
  }

  var description: String {
    var parts: [String] = []
    let cut = readOnly ? "left unread" : "cut"
    if report.truncatedBytes > 0 {
      parts.append("\(counted(Int(report.truncatedBytes), "byte")) of a torn tail \(cut)")
    }
    if report.droppedRecords > 0 {
      parts.append(
        "\(counted(report.droppedRecords, "record")) of unfinished batches \(readOnly ? "left unread" : "dropped")")
    }
    if !report.corruptRegions.isEmpty {
      parts.append("\(counted(report.corruptRegions.count, "damaged region")) skipped")
    }
    if !report.unreadableSegments.isEmpty {
      parts.append("\(counted(report.unreadableSegments.count, "unreadable segment")) left out")
    }
    return parts.isEmpty ? "clean" : parts.joined(separator: ", ")
  }
}
