import CaskTestSupport
import Foundation

// Models with every shape Codable can express, and their seeded random values, for the binary
// coder's tests.

/// An enum with associated values, plain cases and a recursive case.
indirect enum CodedShape: Codable, Equatable, Sendable {
  case point
  case circle(radius: Double)
  case rect(width: Int, height: Int)
  case labeled(String, Int8)
  case group([CodedShape])
  case framed(CodedShape, margin: UInt16?)
}

/// A string-backed key, which dictionaries store as keyed containers.
enum CodedColor: String, Codable, CodingKeyRepresentable, Hashable, Sendable, CaseIterable {
  case red, green, blue
}

/// A struct with its own keys: stored names differ from the property names.
struct CodedRenamed: Codable, Equatable, Sendable {
  var firstName: String
  var yearsOld: UInt8

  enum CodingKeys: String, CodingKey {
    case firstName = "first_name"
    case yearsOld = "age"
  }
}

/// Custom `encode(to:)` and `init(from:)`: nested keyed and unkeyed containers, a super encoder,
/// and a single value written as a pair.
struct CodedCustom: Codable, Equatable, Sendable {
  var title: String
  var point: (x: Int32, y: Int32)
  var flags: [Bool]
  var parent: CodedRenamed

  enum CodingKeys: String, CodingKey { case title, point, flags }
  enum PointKeys: String, CodingKey { case x, y }

  init(title: String, point: (x: Int32, y: Int32), flags: [Bool], parent: CodedRenamed) {
    self.title = title
    self.point = point
    self.flags = flags
    self.parent = parent
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    title = try container.decode(String.self, forKey: .title)
    let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
    self.point = (try point.decode(Int32.self, forKey: .x), try point.decode(Int32.self, forKey: .y))
    var flags = try container.nestedUnkeyedContainer(forKey: .flags)
    var read: [Bool] = []
    while !flags.isAtEnd { read.append(try flags.decode(Bool.self)) }
    self.flags = read
    parent = try CodedRenamed(from: container.superDecoder())
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    // The nested containers are filled after later entries are written: order of use must not matter.
    var point = container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
    var flags = container.nestedUnkeyedContainer(forKey: .flags)
    try container.encode(title, forKey: .title)
    try parent.encode(to: container.superEncoder())
    for flag in self.flags { try flags.encode(flag) }
    try point.encode(self.point.y, forKey: .y)
    try point.encode(self.point.x, forKey: .x)
  }

  static func == (lhs: CodedCustom, rhs: CodedCustom) -> Bool {
    lhs.title == rhs.title && lhs.point == rhs.point && lhs.flags == rhs.flags && lhs.parent == rhs.parent
  }
}

/// A class with a subclass that shares its container.
class CodedAnimal: Codable, @unchecked Sendable {
  var name: String
  init(name: String) { self.name = name }
}

final class CodedDog: CodedAnimal, @unchecked Sendable {
  var goodBoy: Bool
  enum CodingKeys: String, CodingKey { case goodBoy }

  init(name: String, goodBoy: Bool) {
    self.goodBoy = goodBoy
    super.init(name: name)
  }

  required init(from decoder: any Decoder) throws {
    goodBoy = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .goodBoy)
    try super.init(from: decoder)
  }

  override func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(goodBoy, forKey: .goodBoy)
    try super.encode(to: encoder)
  }
}

/// One of everything.
struct CodedEverything: Codable, Equatable, Sendable {
  var int: Int
  var int8: Int8
  var int16: Int16
  var int32: Int32
  var int64: Int64
  var uint: UInt
  var uint8: UInt8
  var uint16: UInt16
  var uint32: UInt32
  var uint64: UInt64
  var float: Float
  var double: Double
  var bool: Bool
  var string: String
  var date: Date
  var data: Data
  var url: URL
  var uuid: UUID
  var decimal: Decimal
  var optional: String?
  var optionalArray: [Int?]
  var array: [Int]
  var nestedArray: [[String]]
  var set: Set<String>
  var stringKeys: [String: Int]
  var intKeys: [Int: String]
  var uuidKeys: [UUID: Date]
  var colorKeys: [CodedColor: [Double]]
  var shape: CodedShape
  var shapes: [CodedShape]
  var renamed: CodedRenamed
  var custom: CodedCustom
  var nested: [String: [String: CodedShape?]]
  var dogName: String
  var dogGoodBoy: Bool

  var dog: CodedDog { CodedDog(name: dogName, goodBoy: dogGoodBoy) }
}

/// Seeded random values of every shape.
struct CodedValues {
  var random: SeededRandom

  mutating func int<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
    // Edges as often as anything else: they are where widths and signs go wrong.
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return [T.min, T.max, 0, 1, T.min &+ 1][Int.random(in: 0..<5, using: &random)]
    case 1: return T(truncatingIfNeeded: Int8.random(in: .min ... .max, using: &random))
    default: return T.random(in: .min ... .max, using: &random)
    }
  }

  mutating func string() -> String {
    let pieces = [
      "", "a", "é", "e\u{301}", "日本", "🦊", "\u{0}", "\"", "\\", " ", "long-" + String(repeating: "x", count: 200),
    ]
    return (0..<Int.random(in: 0..<4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
  }

  /// Any `Double` bit pattern but NaN (which equals nothing); infinities and -0.0 included.
  mutating func double() -> Double {
    let specials: [Double] = [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e-300]
    if Bool.random(using: &random) { return specials.randomElement(using: &random)! }
    var value: Double
    repeat { value = Double(bitPattern: random.next()) } while value.isNaN
    return value
  }

  mutating func float() -> Float {
    var value: Float
    repeat { value = Float(bitPattern: UInt32(truncatingIfNeeded: random.next())) } while value.isNaN
    return value
  }

  mutating func date() -> Date {
    Bool.random(using: &random)
      ? Date(timeIntervalSinceReferenceDate: double())
      : Date(timeIntervalSinceReferenceDate: Double.random(in: -1e10...1e10, using: &random))
  }

  mutating func uuid() -> UUID {
    let high = random.next()
    let low = random.next()
    let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
    return UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
        bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }

  mutating func decimal() -> Decimal {
    let mantissa = Int64.random(in: -999_999_999_999...999_999_999_999, using: &random)
    return Decimal(
      sign: mantissa < 0 ? .minus : .plus, exponent: Int.random(in: -20...20, using: &random),
      significand: Decimal(mantissa.magnitude))
  }

  mutating func shape(depth: Int = 0) -> CodedShape {
    switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &random) {
    case 0: return .point
    case 1: return .circle(radius: double())
    case 2: return .rect(width: int(), height: int())
    case 3: return .labeled(string(), int())
    case 4: return .group((0..<Int.random(in: 0..<3, using: &random)).map { _ in shape(depth: depth + 1) })
    default: return .framed(shape(depth: depth + 1), margin: Bool.random(using: &random) ? int() : nil)
    }
  }

  mutating func count(_ upper: Int = 4) -> Int { Int.random(in: 0...upper, using: &random) }

  mutating func everything() -> CodedEverything {
    CodedEverything(
      int: int(), int8: int(), int16: int(), int32: int(), int64: int(), uint: int(), uint8: int(), uint16: int(),
      uint32: int(), uint64: int(), float: float(), double: double(), bool: Bool.random(using: &random),
      string: string(), date: date(), data: random.bytes(count(40)),
      url: URL(string: "https://example.com/\(int(UInt16.self))/p?q=\(int(Int8.self))#f")!, uuid: uuid(),
      decimal: decimal(), optional: Bool.random(using: &random) ? string() : nil,
      optionalArray: (0..<count()).map { _ in Bool.random(using: &random) ? int() : nil },
      array: (0..<count(20)).map { _ in int() },
      nestedArray: (0..<count()).map { _ in (0..<count()).map { _ in string() } },
      set: Set((0..<count()).map { _ in string() }),
      stringKeys: Dictionary((0..<count()).map { _ in (string(), int()) }, uniquingKeysWith: { first, _ in first }),
      intKeys: Dictionary((0..<count()).map { _ in (int(), string()) }, uniquingKeysWith: { first, _ in first }),
      uuidKeys: Dictionary((0..<count()).map { _ in (uuid(), date()) }, uniquingKeysWith: { first, _ in first }),
      colorKeys: Dictionary(
        CodedColor.allCases.filter { _ in Bool.random(using: &random) }.map {
          ($0, (0..<count()).map { _ in double() })
        },
        uniquingKeysWith: { first, _ in first }),
      shape: shape(), shapes: (0..<count()).map { _ in shape() },
      renamed: CodedRenamed(firstName: string(), yearsOld: int()),
      custom: CodedCustom(
        title: string(), point: (int(), int()), flags: (0..<count()).map { _ in Bool.random(using: &random) },
        parent: CodedRenamed(firstName: string(), yearsOld: int())),
      nested: Dictionary(
        (0..<count()).map { _ in
          (
            string(),
            Dictionary(
              (0..<count()).map { _ in (string(), Bool.random(using: &random) ? shape() : nil) },
              uniquingKeysWith: { first, _ in first })
          )
        }, uniquingKeysWith: { first, _ in first }),
      dogName: string(), dogGoodBoy: Bool.random(using: &random))
  }
}
