import CaskTestSupport
import CipherCask
import Foundation
import Testing

// MARK: Guide: writing async code

/// In `async` code: `await` where a call has an `async` form, nothing where it has none.
func closeVenue(_ venue: String, in events: CaskCollection<Event>) async throws -> (removed: Int, left: Int) {
  let removed = try await events.deleteAll { $0.venue == venue }
  let left = events.count  // a property, with no async form
  return (removed, left)
}

/// Synchronous code gets the blocking forms, without `await`, wherever it is called from.
func attendeeTotal(_ ids: [String], in events: CaskCollection<Event>) throws -> Int {
  try ids.compactMap { try events.get(id: $0) }.reduce(0) { $0 + $1.attendees.count }
}

func attendanceReport(_ ids: [String], in events: CaskCollection<Event>) async throws -> String {
  let total = try attendeeTotal(ids, in: events)  // a synchronous function: no await
  let check = try await events.verifyIndexes()  // reads every object, off this task's thread
  return "\(total) attendees; indexes \(check.isConsistent ? "agree" : "disagree")"
}

/// The samples of Docs/GUIDE.md's section on writing `async` code, run.
@Suite("Guide examples: async code")
struct GuideAsyncExamplesTests {
  @Test("closeVenue and attendanceReport do what the guide says")
  func asyncSamples() async throws {
    try await withStore("guide-async") { store in
      let events = store.collection(Event.self, indexes: [.index("city", \.city)])
      try await events.save(contentsOf: sampleEvents())
      let closed = try await closeVenue("Hall A", in: events)
      #expect(closed.removed == 2 && closed.left == 2)
      #expect(try await attendanceReport(["a2", "a3", "a4"], in: events) == "2 attendees; indexes agree")
    }
  }

  @Test("verifyIndexes' async form reports what the blocking form reports, and follows cancellation")
  func asyncVerifyIndexes() async throws {
    try await withStore("async-verify-indexes") { store in
      let events = store.collection(Event.self, indexes: [.index("city", \.city), .index("venue", \.venue)])
      try await events.save(contentsOf: sampleEvents())
      let report = try await events.verifyIndexes()
      // A closure that is not `async` gets the blocking form.
      let blocking = { () throws -> IndexVerification in try events.verifyIndexes() }
      #expect(report == (try blocking()))
      #expect(report.objects == 4 && report.isConsistent)
      #expect(Set(report.indexes.keys) == ["city", "venue"])
      let cancelled = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        return try await events.verifyIndexes()
      }
      await #expect(throws: CancellationError.self) { try await cancelled.value }
    }
  }
}
