import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Defects found in review of the typed layer (session 5), each pinned by the failure it caused.
@Suite("Typed collections at the edges: huge limits, equivalent ids, dictionary keys, calls from inside an update")
struct CollectionEdgeCaseTests {
  @Test("fetch with a huge limit and a non-zero offset pages instead of trapping on overflow")
  func hugeLimitWithOffsetDoesNotTrap() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(contentsOf: (0..<5).map { Counter(id: $0, value: $0) })
      // `limit: .max` reads as "no limit"; start + limit overflowed Int and trapped.
      #expect(try counters.fetch(limit: .max, offset: 2).map(\.id) == [2, 3, 4])
      #expect(try counters.fetch(sortedBy: { $0.id > $1.id }, limit: .max, offset: 1).map(\.id) == [3, 2, 1, 0])
    }
  }

  @Test("upsert counts two ids that differ only in Unicode normalization as the two objects they store")
  func canonicallyEquivalentIdsAreCountedAsStored() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self)
      let composed = "caf\u{E9}"  // é as one code point
      let decomposed = "cafe\u{301}"  // e + combining acute: == in Swift, another key on disk
      let result = try readings.upsert([Reading(id: composed, value: 1), Reading(id: decomposed, value: 2)])
      // The engine keeps keys by their bytes, so both objects are stored.
      #expect(readings.count == 2)
      #expect(result == .init(inserted: readings.count, replaced: 0))
    }
  }

  @Test("update refuses a change of id to a canonically equivalent id, which is another key")
  func updateToEquivalentIdIsRefused() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self)
      let composed = "caf\u{E9}"
      let decomposed = "cafe\u{301}"
      try readings.save(Reading(id: composed, value: 1))
      // Accepted, the object would be stored under the old key with the new id, and
      // `get(id: updated.id)` would not find the object `update` just returned.
      #expect(throws: CaskError.self) { try readings.update(id: composed) { $0.id = decomposed } }
      #expect(throws: CaskError.self) { try readings.updateAll(where: { _ in true }) { $0.id = decomposed } }
      #expect(try readings.get(id: composed)?.id.utf8.elementsEqual(composed.utf8) == true)
    }
  }

  @Test("an import error does not quote a dictionary key of the data it refused")
  func importErrorQuotesNoDictionaryKey() throws {
    try withStore { store throws in
      let scores = store.collection(Scores.self)
      let json = Data(#"[{"id": "a", "byPatient": {"jane-doe-1970-05-04": "not a number"}}]"#.utf8)
      do {
        try scores.importJSON(json)
        Issue.record("expected invalidImport")
      } catch let error as CaskError {
        #expect(!String(describing: error).contains("jane-doe"), "\(error)")
      }
    }
  }

  @Test("a save from inside update's closure throws reentrantCall instead of deadlocking; the update stands")
  func saveInsideUpdate() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(Counter(id: 1, value: 1))
      let updated = try counters.update(id: 1) { counter in
        do {
          try counters.save(Counter(id: 2, value: 2))
          Issue.record("a save inside update did not throw")
        } catch CaskError.reentrantCall {
        } catch {
          Issue.record("a save inside update threw \(error), not reentrantCall")
        }
        counter.value = 10
      }
      #expect(updated?.value == 10)
      #expect(try counters.get(id: 1)?.value == 10)
      #expect(try counters.get(id: 2) == nil)
    }
  }
}

/// An object with a dictionary whose keys are data, not field names.
private struct Scores: Codable, Identifiable, Sendable {
  var id: String
  var byPatient: [String: Int]
}
