import CaskEngine
import CaskTestSupport
import CipherCask
import Dispatch
import Foundation
import Synchronization

@testable import CipherCaskSync

extension KintoCrashFixture {
  /// The checks of one recovered state, beyond the enumerator's own; each text is a violation.
  ///
  /// - the index equals the objects (`verifyIndexes()`, and each title's query against a
  ///   filter of all objects);
  /// - the cursor is never ahead of the objects it covers: every server change at or before
  ///   the stored cursor is stored (its `last_modified` in the ledger, its object, or its
  ///   deletion done; a change to an object with a queued local change kept as a conflict);
  /// - no queued local change is lost: each object keeps its local version, and its change is
  ///   still marked, kept in conflict, or on the server.
  func check(_ store: CaskStore) throws -> [String] {
    let notes = Self.notes(store)
    var problems: [String] = []
    let report = try notes.verifyIndexes()
    if !report.isConsistent { problems.append("verifyIndexes: \(report)") }
    let all = try notes.all()
    for title in Self.titles {
      let queried = try notes.query().where(\.title, equals: title).count()
      let counted = all.filter { $0.title == title }.count
      if queried != counted { problems.append("the title index finds \(queried) for \(title), the objects \(counted)") }
    }
    let objects = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
    let ledger = SyncLedger(collection: "notes")
    let cursor = try ledger.state(in: store)?.cursor
    if let cursor, let startCursor, cursor < startCursor { problems.append("the cursor went back") }
    let queuedIDs = Set(queued.map(\.id))
    for change in serverChanges {
      guard let cursor, change.modified <= cursor else { continue }
      let meta = try ledger.meta(change.recordID, in: store)
      if let note = change.note {
        let stored =
          queuedIDs.contains(note.id)
          ? try store.contains(ledger.conflictKey(note.id)) : objects[note.id] == note
        if meta?.modified != change.modified || !stored {
          problems.append("the cursor covers a change to \(note.id) that is not stored")
        }
      } else if meta != nil || objects[change.recordID] != nil {
        problems.append("the cursor covers the deletion of \(change.recordID), which is not done")
      }
    }
    let server = try serverNotes()
    for (id, note) in queued {
      if objects[id] != note { problems.append("the queued local change to \(id) is lost") }
      let kept = try store.contains(ledger.markKey(id)) || store.contains(ledger.conflictKey(id))
      if !kept && server[id] != note {
        problems.append("the queued local change to \(id) is neither marked nor on the server")
      }
    }
    return problems
  }

  /// What the server holds after the recorded sync, read once.
  private func serverNotes() throws -> [String: Note] {
    if let known = serverAfterSync.withLock({ $0 }) { return known }
    let http = KintoHTTP(url, collection: remote)
    let notes = try wait { try await http.notes() }
    serverAfterSync.withLock { $0 = notes }
    return notes
  }
}

/// Runs `body` in a task and blocks this thread until it is done: for the enumerator's
/// synchronous workload steps, which run on a thread of their own (`runOffThePool`), never on
/// the cooperative pool the task needs.
@discardableResult
func wait<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
  let result = Mutex<Result<R, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  Task {
    do {
      let value = try await body()
      result.withLock { $0 = .success(value) }
    } catch {
      result.withLock { $0 = .failure(error) }
    }
    done.signal()
  }
  done.wait()
  guard let outcome = result.withLock({ $0 }) else {
    throw KintoProcessError(description: "the task ended without a result")
  }
  return try outcome.get()
}

/// Runs the synchronous `body` on a thread of its own and awaits it, so that the tasks it
/// waits for (`wait`) have the cooperative pool to run on.
func runOffThePool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}
