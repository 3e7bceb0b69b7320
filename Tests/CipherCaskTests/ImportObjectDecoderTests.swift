import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// The import's own JSON decoding path answers exactly as `JSONDecoder` does: where it
/// answers at all, the same value (bit for bit); everywhere else `JSONDecoder` itself answers,
/// errors included. Seeded texts (seed printed, `CASK_TEST_SEED` replays).
@Suite("The import's JSON decoder against JSONDecoder")
struct ImportObjectDecoderTests {
  struct Inner: Codable, Equatable {
    var label: String
    var values: [Int]?
  }

  /// A field of every kind an import meets.
  struct Model: Codable, Equatable {
    var id: String
    var text: String
    var int: Int
    var int8: Int8?
    var uint16: UInt16?
    var int64: Int64?
    var uint64: UInt64?
    var double: Double
    var float: Float?
    var flag: Bool
    var date: Date?
    var url: URL?
    var data: Data?
    var tags: [String]
    var nested: Inner?
    var map: [String: Int]?
    var matrix: [[Double]]?
    var snakeCaseField: String?

    static func == (lhs: Model, rhs: Model) -> Bool {
      // Bit for bit, where == would let -0.0 and 0.0 (or two NaNs) pass for each other.
      lhs.id == rhs.id && lhs.text == rhs.text && lhs.int == rhs.int && lhs.int8 == rhs.int8
        && lhs.uint16 == rhs.uint16 && lhs.int64 == rhs.int64 && lhs.uint64 == rhs.uint64
        && lhs.double.bitPattern == rhs.double.bitPattern && lhs.float?.bitPattern == rhs.float?.bitPattern
        && lhs.flag == rhs.flag
        && lhs.date?.timeIntervalSinceReferenceDate.bitPattern
          == rhs.date?.timeIntervalSinceReferenceDate.bitPattern
        && lhs.url == rhs.url && lhs.data == rhs.data && lhs.tags == rhs.tags && lhs.nested == rhs.nested
        && lhs.map == rhs.map
        && lhs.matrix?.map { $0.map(\.bitPattern) } == rhs.matrix?.map { $0.map(\.bitPattern) }
        && lhs.snakeCaseField == rhs.snakeCaseField
    }
  }

  static func decoders() -> [(String, JSONDecoder)] {
    let plain = JSONDecoder()
    let events = JSONDecoder()
    events.keyDecodingStrategy = .convertFromSnakeCase
    events.dateDecodingStrategy = .iso8601
    let seconds = JSONDecoder()
    seconds.dateDecodingStrategy = .secondsSince1970
    let milliseconds = JSONDecoder()
    milliseconds.dateDecodingStrategy = .millisecondsSince1970
    milliseconds.keyDecodingStrategy = .convertFromSnakeCase
    return [("plain", plain), ("snake+iso8601", events), ("seconds", seconds), ("milliseconds+snake", milliseconds)]
  }

  /// What `JSONDecoder` makes of `text`.
  static func foundation(_ text: Data, _ decoder: JSONDecoder) -> Outcome<Model> {
    Outcome { try decoder.decode(Model.self, from: text) }
  }

  /// What the import's decoder makes of it.
  static func imported(_ text: Data, _ decoder: JSONDecoder) -> Outcome<Model> {
    Outcome { try ImportObjectDecoder(decoder).decode(Model.self, from: text) }
  }

  @Test("seeded texts: every answer of the fast path is JSONDecoder's, and it answers most of them")
  func seededTextsDecodeAsJSONDecoderDoes() throws {
    var random = SeededRandom.make(test: "seededTextsDecodeAsJSONDecoderDoes")
    var generator = JSONTextGenerator(random: random)
    var answered = 0
    var valid = 0
    let iterations = testIterations(1_500)
    for iteration in 0..<iterations {
      let (name, decoder) = Self.decoders()[iteration % 4]
      let text = generator.object(snakeCase: name.contains("snake"), isoDates: name.contains("iso"))
      let expected = Self.foundation(text, decoder)
      let fast = ImportObjectDecoder.fastPath(Model.self, from: text, decoder: decoder)
      if case .value(let value) = expected {
        valid += 1
        if let fast {
          answered += 1
          #expect(fast == value, "\(name): \(String(decoding: text, as: UTF8.self))")
        }
      } else {
        #expect(
          fast == nil,
          "\(name): the fast path decoded what JSONDecoder refuses: \(String(decoding: text, as: UTF8.self))")
      }
      #expect(Self.imported(text, decoder) == expected, "\(name): \(String(decoding: text, as: UTF8.self))")
      _ = random.next()
    }
    // Most valid texts are answered by the fast path, or it would be no faster.
    #expect(valid > iterations / 3)
    #expect(answered * 10 > valid * 7, "answered \(answered) of \(valid)")
  }

  @Test("malformed and mismatched objects give JSONDecoder's own errors")
  func malformedObjectsGiveJSONDecodersErrors() throws {
    let base = #""id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[]"#
    let texts = [
      "", "{", "}", "[]", "null", "{\(base)", "{\(base),}", "{\(base)} x", "{\(base),\"int\":01}",
      #"{"id":"a","text":"t","int":1.5,"double":2.5,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"t","int":1e400,"double":2.5,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"t","int":99999999999999999999,"double":2.5,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"t","int":1,"double":1e400,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"t","int":1,"double":1e-400,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"t","int":1,"double":"2.5","flag":true,"tags":[]}"#,
      #"{"id":"a","text":"\ud800","int":1,"double":2.5,"flag":true,"tags":[]}"#,
      #"{"id":"a","text":"\x","int":1,"double":2.5,"flag":true,"tags":[]}"#,
      "{\"id\":\"a\",\"text\":\"\u{1}\",\"int\":1,\"double\":2.5,\"flag\":true,\"tags\":[]}",
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":1,"tags":[]}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[1]}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":null}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"int8":300}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"uint16":-1}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"url":""}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"data":"***"}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"date":"2026-02-30T00:00:00Z"}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"date":"yesterday"}"#,
      #"{"id":"a","text":"t","int":1,"double":2.5,"flag":true,"tags":[],"nested":{"values":[]}}"#,
    ]
    for (name, decoder) in Self.decoders() {
      for text in texts {
        let data = Data(text.utf8)
        let expected = Self.foundation(data, decoder)
        #expect(Self.imported(data, decoder) == expected, "\(name): \(text)")
        if case .error = expected {
          #expect(ImportObjectDecoder.fastPath(Model.self, from: data, decoder: decoder) == nil, "\(name): \(text)")
        }
      }
    }
    // Invalid UTF-8 inside a string.
    let invalid =
      Data(#"{"id":"a","text":""#.utf8) + Data([0xC3, 0x28])
      + Data(#"","int":1,"double":1,"flag":true,"tags":[]}"#.utf8)
    #expect(Self.imported(invalid, JSONDecoder()) == Self.foundation(invalid, JSONDecoder()))
    #expect(ImportObjectDecoder.fastPath(Model.self, from: invalid, decoder: JSONDecoder()) == nil)
  }

  @Test("deep nesting and huge numbers neither crash nor differ from JSONDecoder")
  func deepNestingAndHugeNumbers() throws {
    for depth in [10, 255, 256, 257, 600, 100_000] {
      let text = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
      let expected = Outcome { try JSONDecoder().decode([[Double]].self, from: text).count }
      let got = Outcome { try ImportObjectDecoder(JSONDecoder()).decode([[Double]].self, from: text).count }
      #expect(got == expected, "depth \(depth)")
    }
    let huge = "1" + String(repeating: "0", count: 5_000)
    for number in [
      huge, "-" + huge, huge + ".5", "0." + huge, "1e99999999999", "-1e-99999999999", "4.9e-324",
      "2.2250738585072014e-308", "1.7976931348623157e308", "9007199254740993", "0.1", "-0", "-0.0",
      "123456789012345678",
    ] {
      let text = Data("[\(number)]".utf8)
      #expect(
        Outcome { try JSONDecoder().decode([Double].self, from: text).map(\.bitPattern) }
          == Outcome { try ImportObjectDecoder(JSONDecoder()).decode([Double].self, from: text).map(\.bitPattern) },
        "\(number) as Double")
      #expect(
        Outcome { try JSONDecoder().decode([Int64].self, from: text) }
          == Outcome { try ImportObjectDecoder(JSONDecoder()).decode([Int64].self, from: text) },
        "\(number) as Int64")
      #expect(
        Outcome { try JSONDecoder().decode([Float].self, from: text).map(\.bitPattern) }
          == Outcome { try ImportObjectDecoder(JSONDecoder()).decode([Float].self, from: text).map(\.bitPattern) },
        "\(number) as Float")
    }
  }

  @Test("ISO 8601 dates read here are the dates Foundation reads, across four centuries and leap days")
  func plainISO8601MatchesFoundation() throws {
    var random = SeededRandom.make(test: "plainISO8601MatchesFoundation")
    let style = Date.ISO8601FormatStyle()
    var texts = [
      "1900-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2100-02-28T12:00:00Z", "9999-12-31T23:59:59Z",
      "1970-01-01T00:00:00Z", "2024-02-29T00:00:00Z",
    ]
    for _ in 0..<testIterations(2_000) {
      let seconds = Double(Int64.random(in: -2_208_988_800...253_402_300_799, using: &random))
      texts.append(style.format(Date(timeIntervalSince1970: seconds)))
    }
    for text in texts {
      let ours = try #require(JSONTapeDecoding.plainISO8601(text), "\(text)")
      #expect(ours == (try style.parse(text)), "\(text)")
    }
    for text in [
      "2023-02-29T00:00:00Z", "1899-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z",
      "2026-01-01T00:00:60Z", "2026-01-01t00:00:00Z", "2026-01-01T00:00:00+01:00",
    ] {
      #expect(JSONTapeDecoding.plainISO8601(text) == nil, "\(text)")
    }
  }

  @Test("keys: first of two equal names wins, canonically equivalent names match, snake case as Foundation")
  func keysMatchAsFoundationMatchesThem() throws {
    struct Keys: Codable, Equatable {
      var name: String
      var kelvin: String?
      enum CodingKeys: String, CodingKey {
        case name, fooBar, map
        case kelvin = "K"
      }
      var fooBar: String?
      var map: [String: Int]?
    }
    let texts = [
      #"{"name":"first","name":"second"}"#,
      #"{"na\u006de":"escaped"}"#,
      #"{"name":"n","\u212a":"kelvin"}"#,
      #"{"name":"n","foo_bar":"snake","fooBar":"camel"}"#,
      #"{"name":"n","fooBar":"camel","foo_bar":"snake"}"#,
      #"{"name":"n","_foo_bar_":"x","foo__bar":"y","FOO_BAR":"z"}"#,
      #"{"name":"n","map":{"a_b":1,"a_b":2,"c":3}}"#,
      #"{"name":"n","map":{"é":1,"é":2}}"#,
    ]
    for (name, decoder) in Self.decoders() {
      for text in texts {
        let data = Data(text.utf8)
        let expected = Outcome { try decoder.decode(Keys.self, from: data) }
        #expect(
          Outcome { try ImportObjectDecoder(decoder).decode(Keys.self, from: data) } == expected, "\(name): \(text)")
        if let fast = ImportObjectDecoder.fastPath(Keys.self, from: data, decoder: decoder) {
          #expect(Outcome.value(fast) == expected, "\(name): \(text)")
        }
      }
    }
  }

  @Test("a type that catches its decoding errors still gets JSONDecoder's answer")
  func caughtFailuresStillFallBack() throws {
    struct Lenient: Decodable, Equatable {
      var value: Int?
      var text: String?
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Decimal-looking integers are Foundation's to read; a caught failure must not hide that.
        value = try? container.decode(Int.self, forKey: .value)
        text = try? container.decode(String.self, forKey: .text)
      }
      enum CodingKeys: String, CodingKey { case value, text }
    }
    for text in [#"{"value":1.0,"text":"a"}"#, #"{"value":1e2,"text":"b"}"#, #"{"value":"x","text":1}"#] {
      let data = Data(text.utf8)
      #expect(
        try ImportObjectDecoder(JSONDecoder()).decode(Lenient.self, from: data)
          == JSONDecoder().decode(Lenient.self, from: data), "\(text)")
    }
  }
}

/// A decode's value, or its error's kind, path and description.
enum Outcome<Value: Equatable>: Equatable {
  case value(Value)
  case error(String)

  init(_ body: () throws -> Value) {
    do {
      self = .value(try body())
    } catch {
      self = .error(CollectionError.summary(of: error) + " / \(error)")
    }
  }
}

/// Random JSON objects for `ImportObjectDecoderTests.Model`: valid ones of every number form,
/// escape and Unicode, with now and then a field missing, of the wrong kind or out of range.
struct JSONTextGenerator {
  var random: SeededRandom

  mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

  mutating func string() -> String {
    let pieces = [
      "a", "Zz", " ", "é", "e\u{301}", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83d\\ude00",
      "\\u0000", "\\t", "日本", "\\u212A", "_", "x_y",
    ]
    return (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
  }

  mutating func integer(_ range: ClosedRange<Int64>) -> String {
    if chance(3) {
      return ["1.0", "1e2", "-0", "01", "1.5", "18446744073709551616", "\"3\""].randomElement(using: &random)!
    }
    return String(Int64.random(in: range, using: &random))
  }

  mutating func double() -> String {
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return String(Int.random(in: -1_000_000...1_000_000, using: &random))
    case 1: return String(Double.random(in: -1e6...1e6, using: &random))
    case 2: return "\(Int.random(in: 0...99999, using: &random)).\(Int.random(in: 0...99999, using: &random))"
    case 3: return "\(Int.random(in: 1...9, using: &random))e\(Int.random(in: -330...330, using: &random))"
    case 4: return String(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF))
    case 5: return "-0.\(String(repeating: "0", count: Int.random(in: 0...30, using: &random)))1"
    case 6:
      return ["0", "-0", "0.0", "1E+2", "12345678901234567890", "0.1e-1", "1e400", "\"1\""].randomElement(
        using: &random)!
    default: return String(Float.random(in: -1000...1000, using: &random))
    }
  }

  mutating func date(isoDates: Bool) -> String {
    if isoDates {
      let seconds = Double(Int64.random(in: 0...4_000_000_000, using: &random))
      if chance(5) { return "\"2026-03-01T18:00:00+02:00\"" }
      return "\"" + Date.ISO8601FormatStyle().format(Date(timeIntervalSince1970: seconds)) + "\""
    }
    return double()
  }

  mutating func object(snakeCase: Bool, isoDates: Bool) -> Data {
    var fields: [(String, String)] = [
      ("id", "\"\(string())\""), ("text", "\"\(string())\""), ("int", integer(-1_000_000_000...1_000_000_000)),
      ("double", double()), ("flag", chance(50) ? "true" : "false"),
      (
        "tags",
        "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in "\"\(string())\"" }.joined(separator: ",") + "]"
      ),
    ]
    if chance(50) { fields.append(("int8", integer(-130...130))) }
    if chance(50) { fields.append(("uint16", integer(-2...70_000))) }
    if chance(50) { fields.append(("int64", integer(Int64.min...Int64.max))) }
    if chance(50) { fields.append(("uint64", integer(0...Int64.max))) }
    if chance(50) { fields.append(("float", double())) }
    if chance(50) { fields.append(("date", date(isoDates: isoDates))) }
    if chance(40) {
      fields.append(("url", chance(90) ? "\"https://example.com/\(Int.random(in: 0...99, using: &random))\"" : "\"\""))
    }
    if chance(40) {
      fields.append(("data", "\"\(random.bytes(Int.random(in: 0...9, using: &random)).base64EncodedString())\""))
    }
    if chance(40) { fields.append(("nested", #"{"label":"\#(string())","values":[1,2,\#(integer(-5...5))]}"#)) }
    if chance(30) { fields.append(("map", #"{"a_b":1,"\#(string())":2}"#)) }
    if chance(30) { fields.append(("matrix", "[[\(double()),\(double())],[]]")) }
    if chance(40) { fields.append((snakeCase ? "snake_case_field" : "snakeCaseField", "\"\(string())\"")) }
    if chance(10) { fields.append(("unknown_extra", "{\"deep\":[null,true,{\"x\":\(double())}]}")) }
    if chance(10) { fields.append(("nested", "null")) }
    if chance(5) { fields.removeFirst() }
    if chance(5) { fields.append(("id", "\"again\"")) }
    fields.shuffle(using: &random)
    let spaces = chance(20) ? " " : ""
    return Data(
      ("{" + spaces + fields.map { "\"\($0.0)\"\(spaces):\(spaces)\($0.1)" }.joined(separator: "," + spaces) + "}").utf8
    )
  }
}
