import CaskCLIKit
import CipherCask
import Foundation

/// One `cask import` into an open store: objects come from a pipeline (read, split and checked
/// on a second thread) and are written in streamed batches of `batchSize`, each atomic; when the
/// run stops early (a signal, bad input, a store error) it says exactly what it kept, so that
/// the import can be resumed from the right line.
final class ImportSession {
  /// What an import wrote.
  struct Totals {
    var objects = 0
    var inserted = 0
    var replaced = 0
    /// The input line of the last object written (for an array, the line it starts on).
    var throughLine = 0
  }

  /// One object read and checked, with its store key and how far into the input it ends.
  struct Object {
    var record: JSONRecord
    var key: String
    var bytesRead: UInt64
  }

  /// Thrown inside a batch to abort it when a signal asks the import to stop.
  private struct Interrupted: Error {}

  private let store: CaskStore
  /// The store's path, for error messages.
  private let path: String
  /// The input's name in messages (`'file.json'`, `standard input`).
  private let inputName: String
  private let batchSize: Int
  private(set) var totals = Totals()
  /// Objects of the batch under way (not committed).
  private var pending = 0
  /// The input line the batch under way starts on.
  private var batchLine = 1

  init(store: CaskStore, path: String, inputName: String, batchSize: Int) {
    self.store = store
    self.path = path
    self.inputName = inputName
    self.batchSize = batchSize
  }

  /// Writes every object `pipeline` gives, batch by batch, until it ends or `shouldContinue`
  /// says stop (then prints what was kept and returns normally).
  ///
  /// - Throws: `CLIError.failure` for invalid input or a store error, saying what was kept.
  func run(
    _ pipeline: ImportPipeline<Object>, progress: ProgressCounter, onInterrupt: () -> Void,
    shouldContinue: () -> Bool
  ) throws -> Totals {
    do {
      while try writeBatch(pipeline, progress: progress, shouldContinue: shouldContinue) == false {}
    } catch is Interrupted {
      onInterrupt()
      StandardStream.error.write("Interrupted: \(kept()).\n")
    } catch CollectionError.invalidImport(let reason, let line) {
      throw invalidInput(reason, line: line)
    } catch let error as CaskError {
      // Prevents: a full disk naming the errno but not how much of the input is in.
      throw CLIError.failure("\(ErrorMessage.describe(error, store: path)); \(kept())")
    }
    return totals
  }

  /// Writes one streamed batch of up to `batchSize` objects: each is appended as it is read,
  /// and none is visible until the batch commits.
  ///
  /// - Returns: whether the input has ended.
  private func writeBatch(
    _ pipeline: ImportPipeline<Object>, progress: ProgressCounter, shouldContinue: () -> Bool
  ) throws -> Bool {
    let (tally, lastLine, atEnd) = try store.streamedBatch { batch -> (UpsertTally, Int, Bool) in
      var tally = UpsertTally()
      var lastLine = 0
      while let object = try pipeline.next() {
        guard shouldContinue() else { throw Interrupted() }
        if pending == 0 { batchLine = object.record.line }
        try batch.upsert(object.record.bytes, forKey: object.key, counting: &tally)
        pending += 1
        lastLine = object.record.line
        progress.set(object.bytesRead)
        if pending == batchSize { return (tally, lastLine, false) }
      }
      guard shouldContinue() else { throw Interrupted() }
      return (tally, lastLine, true)
    }
    totals.inserted += tally.inserted
    totals.replaced += tally.replaced
    totals.objects += pending
    if pending > 0 { totals.throughLine = lastLine }
    pending = 0
    return atEnd
  }

  /// What is in the store after a stop.
  private func kept() -> String {
    totals.objects == 0
      ? "nothing was written"
      : "\(counted(totals.objects, "object")) \(totals.objects == 1 ? "was" : "were") imported, "
        + "through line \(totals.throughLine) of \(inputName); nothing after that line was written"
  }

  /// The message for invalid input at `line`: the batches before the failing one are in.
  private func invalidInput(_ reason: String, line: Int?) -> CLIError {
    let place = line.map { "line \($0) of \(inputName)" } ?? inputName
    // With no object pending, the batches so far are all in: nothing is lost before the error.
    let from = pending == 0 ? (line ?? batchLine) : batchLine
    let kept =
      totals.objects == 0
      ? "nothing was written"
      : "the \(counted(totals.objects, "object")) before line \(from) \(totals.objects == 1 ? "was" : "were") imported, "
        + "nothing from that line on"
    return CLIError.failure("invalid import at \(place): \(reason); \(kept)")
  }
}
