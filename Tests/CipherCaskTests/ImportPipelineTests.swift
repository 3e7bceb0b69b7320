import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CipherCask

/// The two threads of a streamed import: items in order, the producer's error after every
/// item made before it, a consumer that stops ends the producer, and user code on the decoding
/// thread that writes to the store fails instead of waiting forever for the import's writer.
@Suite("The decoding thread of streamed imports")
struct ImportPipelineTests {
  struct Failure: Error, Equatable {}

  @Test("items arrive in order, then the producer's error")
  func itemsThenError() throws {
    let pipeline = ImportPipeline<Int> { emit in
      for item in 0..<1_000 where !emit(item, item % 100 == 0) { return }
      throw Failure()
    }
    defer { pipeline.stop() }
    var seen: [Int] = []
    #expect(throws: Failure.self) {
      while let item = try pipeline.next() { seen.append(item) }
    }
    #expect(seen == Array(0..<1_000))
  }

  @Test("a consumer that stops ends a producer waiting for room")
  func stopEndsABlockedProducer() throws {
    let made = Atomic<Int>(0)
    let pipeline = ImportPipeline<Int> { emit in
      var item = 0
      while emit(item, false) {
        item += 1
        made.store(item, ordering: .relaxed)
      }
    }
    #expect(try pipeline.next() == 0)
    pipeline.stop()
    let after = made.load(ordering: .relaxed)
    // Bounded: the producer waited for room, and nothing of it runs after stop().
    #expect(after <= (ImportPipeline<Int>.capacity + 2) * ImportPipeline<Int>.chunkLength)
    Thread.sleep(forTimeInterval: 0.05)
    #expect(made.load(ordering: .relaxed) == after)
  }

  /// Decoding writes to the store it is imported into: a model no one should write, which
  /// must fail the import rather than hang it.
  struct Writer: Codable, Identifiable, Sendable {
    nonisolated(unsafe) static var store: CaskStore?
    var id: String

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      id = try container.decode(String.self, forKey: .id)
      try Self.store?.put(Data("x".utf8), forKey: "side/\(id)")
    }
  }

  @Test("a model that writes to the store while it decodes fails the import, which writes nothing")
  func decodingThatWritesFails() throws {
    try withTemporaryDirectory("pipeline") { directory in
      let url = URL(fileURLWithPath: directory.file("writers.jsonl"))
      try Data((1...100).map { #"{"id":"w\#($0)"}"# }.joined(separator: "\n").utf8).write(to: url)
      try withStore { store in
        Writer.store = store
        defer { Writer.store = nil }
        let writers = store.collection(Writer.self, named: "writers")
        #expect(throws: CollectionError.self) { try writers.importJSON(contentsOf: url) }
        #expect(writers.count == 0)
        let sideWrite = try store.contains("side/w1")
        #expect(!sideWrite)
      }
    }
  }
}
