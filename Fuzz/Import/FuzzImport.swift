import CipherCask
import Foundation
import FuzzSupport
import Synchronization

/// fuzz-import: `CaskCollection.importJSON` on a store on an in-memory disk.
///
/// Input: a mode byte, then the JSON. Mode bit 0 decodes with snake-case keys and ISO 8601
/// dates (as the demo events do). Only `CaskError` or `CollectionError` may be thrown; an import that succeeds
/// counts each distinct id once, and every id then reads back as its last occurrence in the
/// array, exactly (dates included: far dates came back as other dates once); a
/// failed import writes nothing. The import's own JSON decoding answers as `JSONDecoder` does:
/// a value only where `JSONDecoder` gives the same value, otherwise `JSONDecoder`'s own error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImport(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  ImportTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

/// An object with a field of every JSON kind.
struct FuzzRecord: Codable, Identifiable, Sendable, Equatable {
  var id: String
  var name: String?
  var count: Int
  var score: Double?
  var tags: [String]
  var createdAt: Date?
  var nested: [String: Int]?
  var flag: Bool?
}

enum ImportTarget {
  /// The store, replaced by a fresh one every few hundred inputs so the in-memory disk stays small.
  private static let state = Mutex<(store: CaskStore?, uses: Int)>((nil, 0))

  static func decoder(snakeCase: Bool) -> JSONDecoder {
    let decoder = JSONDecoder()
    if snakeCase {
      decoder.keyDecodingStrategy = .convertFromSnakeCase
      decoder.dateDecodingStrategy = .iso8601
    }
    return decoder
  }

  static func store() -> CaskStore {
    state.withLock { state in
      if let store = state.store, state.uses < 300 {
        state.uses += 1
        return store
      }
      try? state.store?.close()
      let fileSystem = FuzzStore.disk(with: [])
      var options = FuzzStore.options(fileSystem, readOnly: false)
      options.createIfMissing = true
      do {
        let store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: options)
        state = (store, 1)
        return store
      } catch {
        fatalError("creating the import store: \(error)")
      }
    }
  }

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let snakeCase = input.byte() & 1 != 0
    let json = input.rest()
    checkFastDecoding(json, decoder: decoder(snakeCase: snakeCase))
    let store = store()
    let collection = store.collection(FuzzRecord.self, named: "records")
    let before = collection.count
    let decoder = decoder(snakeCase: snakeCase)
    let result: CaskCollection<FuzzRecord>.ImportResult
    do {
      result = try collection.importJSON(json, decoder: decoder)
    } catch {
      FuzzReplay.check(
        error is CaskError || error is CollectionError,
        "import threw neither CaskError nor CollectionError: \(type(of: error))")
      FuzzReplay.check(collection.count == before, "a failed import changed the collection")
      return
    }
    // The import succeeded, so the JSON decodes; each id must now read back.
    guard let objects = try? decoder.decode([FuzzRecord].self, from: json) else {
      FuzzReplay.check(false, "an import succeeded on JSON that does not decode")
      return
    }
    var last: [String: FuzzRecord] = [:]
    for object in objects { last[object.id] = object }
    FuzzReplay.check(result.inserted + result.replaced == last.count, "import counted \(result), not \(last.count) ids")
    FuzzReplay.check(collection.count == before + result.inserted, "count after import")
    for (id, object) in last {
      let stored: FuzzRecord?
      do {
        stored = try collection.get(id: id)
      } catch {
        FuzzReplay.check(false, "an object the import accepted does not read back: \(error)")
        return
      }
      FuzzReplay.check(stored == object, "an imported object reads back differently")
    }
  }

  /// The import's decoder (fast path and all) against `JSONDecoder`, on the whole array and
  /// on its first element.
  static func checkFastDecoding(_ json: Data, decoder: JSONDecoder) {
    func outcome<T: Equatable>(_ body: () throws -> T) -> Result<T, DecodingFailure> {
      do {
        return .success(try body())
      } catch {
        return .failure(DecodingFailure(summary: CollectionError.summary(of: error), text: "\(error)"))
      }
    }
    let expected = outcome { try decoder.decode([FuzzRecord].self, from: json) }
    if let fast = ImportObjectDecoder.fastPath([FuzzRecord].self, from: json, decoder: decoder) {
      FuzzReplay.check(expected == .success(fast), "the fast path decoded differently from JSONDecoder")
    }
    FuzzReplay.check(
      outcome { try ImportObjectDecoder(decoder).decode([FuzzRecord].self, from: json) } == expected,
      "the import's decoder answered differently from JSONDecoder")
    let object = outcome { try decoder.decode(FuzzRecord.self, from: json) }
    FuzzReplay.check(
      outcome { try ImportObjectDecoder(decoder).decode(FuzzRecord.self, from: json) } == object,
      "the import's decoder answered differently from JSONDecoder for an object")
  }

  /// A failed decode. Two failures count as the same answer whatever their text: the path in
  /// `JSONDecoder`'s own error can differ between two of its runs on the same bytes (a
  /// dictionary's keys come in hash order, so the first bad one it meets varies).
  struct DecodingFailure: Error, Equatable {
    var summary: String
    var text: String

    static func == (lhs: DecodingFailure, rhs: DecodingFailure) -> Bool { true }
  }

  static func seeds() throws -> [(String, Data)] {
    let plain = """
      [{"id":"a","name":"Alice","count":1,"score":2.5,"tags":["x","y"],"createdAt":700000000,"nested":{"k":1},"flag":true},
       {"id":"b","count":-3,"tags":[]},{"id":"a","count":2,"tags":["again"]}]
      """
    let snake = """
      [{"id":"e1","count":0,"tags":["t"],"created_at":"2024-05-01T12:00:00Z","score":1e-3},
       {"id":"e2","count":9007199254740991,"tags":[],"flag":false,"nested":{}}]
      """
    let numbers = """
      [{"id":"n\\u00e9\\n","count":-0,"score":-0.0,"tags":["\\ud83d\\ude00","a\\/b"],"nested":{"a":1,"a":2}},
       {"id":"m","count":1.0,"score":1e-400,"tags":[]},{"id":"o","count":1,"score":123456789012345678901234,"tags":[]}]
      """
    let snakeKeys = """
      [{"id":"s","count":2,"tags":[],"created_at":"1999-12-31T23:59:59Z","nested":{"a_b":1},"flag":null,"created_At":"x"}]
      """
    return [
      ("plain", Data([0]) + Data(plain.utf8)), ("snake-case", Data([1]) + Data(snake.utf8)),
      ("empty-array", Data([0]) + Data("[]".utf8)), ("not-an-array", Data([0]) + Data("{\"id\":\"a\"}".utf8)),
      ("missing-field", Data([0]) + Data("[{\"id\":\"a\"}]".utf8)),
      ("unicode-id", Data([0]) + Data("[{\"id\":\"\\u00e9\\u0000\\ud83d\\ude00\",\"count\":1,\"tags\":[]}]".utf8)),
      ("empty-id", Data([0]) + Data("[{\"id\":\"\",\"count\":1,\"tags\":[]}]".utf8)),
      ("truncated", Data([0]) + Data(plain.utf8.prefix(40))),
      ("numbers-escapes", Data([0]) + Data(numbers.utf8)), ("snake-keys-dates", Data([1]) + Data(snakeKeys.utf8)),
    ]
  }
}
