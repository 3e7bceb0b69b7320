import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench codec`: the RNCryptor v3 codec's throughput beside `openssl speed`'s AES-256-CBC
/// and HMAC-SHA256 in the same run. A message is one AES pass and one HMAC pass over about the
/// same bytes, so the most a codec on this libcrypto can do is `1 / (1/aes + 1/hmac)`, with
/// AES encryption's speed for encryption and AES-CBC decryption's (much faster) for decryption.
enum CodecCommand: BenchCommand {
  static let name = "codec"
  static let abstract = "RNCryptor v3 codec throughput against openssl speed's AES-256-CBC + HMAC-SHA256 bound."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "Shorter runs and one openssl round: the whole run in about 15 s, with more noise."),
    ResultsDestination.option,
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    try options.measure { results, _ in try results.write(measure(quick ? .quick : .full)) }
  }

  struct Settings: Codable {
    let quick: Bool
    let runs: Int
    let secondsPerRun: Double
    let opensslSeconds: Int
    /// Each openssl figure's rounds: one before our runs, the others between and after them.
    let opensslRounds: Int
    /// Single 1 KiB messages timed one by one for p50/p99; messages with a PBKDF2 pair each.
    let latencySamples: Int
    let pbkdf2Samples: Int

    static let quick = Settings(
      quick: true, runs: 5, secondsPerRun: 0.08, opensslSeconds: 1, opensslRounds: 1, latencySamples: 5_000,
      pbkdf2Samples: 20)
    static let full = Settings(
      quick: false, runs: 5, secondsPerRun: 0.5, opensslSeconds: 1, opensslRounds: 3, latencySamples: 50_000,
      pbkdf2Samples: 50)
  }

  /// Message sizes, each with the openssl block size that bounds it (openssl stops at 16 KiB,
  /// where both primitives have long reached their steady speed).
  static let sizes: [(label: String, bytes: Int, opensslBytes: Int)] = [
    ("1 KiB", 1024, 1024), ("16 KiB", 16 * 1024, 16 * 1024), ("1 MiB", 1024 * 1024, 16 * 1024),
  ]

  struct Bound: Codable {
    let primitive: OpenSSLSpeed.Primitive
    let blockBytes: Int
    /// Median of the rounds.
    let megabytesPerSecond: Double
    let rounds: [Double]
  }

  struct Throughput: Codable {
    let message: String
    let messageBytes: Int
    let format: String
    let operation: String
    /// Median over the runs of plaintext megabytes (10^6 bytes) per second.
    let megabytesPerSecond: Double
    let runs: Runs
    let opensslBlockBytes: Int
    let aesMegabytesPerSecond: Double?
    let hmacMegabytesPerSecond: Double?
    /// `1 / (1/aes + 1/hmac)` with this operation's AES direction.
    let boundMegabytesPerSecond: Double?
    let ratio: Double?
    /// For decryption, the bound with AES *encryption* speed (a looser bound, as the targets were first stated).
    let encryptSpeedBoundMegabytesPerSecond: Double?
  }

  struct MessageRate: Codable {
    let workload: String
    let messagesPerSecond: Double
    let latencySeconds: Latency
  }

  struct Report: Codable {
    let settings: Settings
    let bounds: [Bound]
    let throughput: [Throughput]
    let messageRates: [MessageRate]
    let targets: [Target]
  }

  static let password = ValueCipher.password

  /// One throughput figure: a message size, a format and an operation.
  struct Case {
    let size: (label: String, bytes: Int, opensslBytes: Int)
    /// `key` (`RNCryptor.Keys`) or `password` (`PasswordKeys` derived once).
    let format: String
    /// `encrypt` or `decrypt`.
    let operation: String

    /// The AES direction that bounds this operation.
    var aes: OpenSSLSpeed.Primitive {
      operation == "decrypt" ? .aes256CBCDecrypt : .aes256CBCEncrypt
    }
  }

  /// The openssl figures of every round, in MB/s, per primitive and block size; a failed
  /// measurement leaves its figure out (the table then shows n/a) rather than failing the run.
  final class BoundRounds {
    private let seconds: Int
    private var rounds: [OpenSSLSpeed.Primitive: [Int: [Double]]] = [:]

    init(seconds: Int) {
      self.seconds = seconds
    }

    func measureRound() {
      for primitive in OpenSSLSpeed.Primitive.allCases {
        for bytes in Set(sizes.map(\.opensslBytes)).sorted() {
          printToStandardError("codec: openssl speed \(primitive.rawValue), \(bytes)-byte blocks")
          do {
            let speed = try OpenSSLSpeed.measure(primitive, bytes: bytes, seconds: seconds)
            rounds[primitive, default: [:]][bytes, default: []].append(speed / 1e6)
          } catch {
            printToStandardError("codec: no bound: \(error)")
          }
        }
      }
    }

    func median(_ primitive: OpenSSLSpeed.Primitive, _ bytes: Int) -> Double? {
      rounds[primitive]?[bytes].map(Statistics.median)
    }

    var bounds: [Bound] {
      OpenSSLSpeed.Primitive.allCases.flatMap { primitive in
        (rounds[primitive] ?? [:]).keys.sorted().map { bytes in
          let figures = rounds[primitive]?[bytes] ?? []
          return Bound(
            primitive: primitive, blockBytes: bytes, megabytesPerSecond: Statistics.median(figures), rounds: figures)
        }
      }
    }
  }

  static func measure(_ settings: Settings) throws -> Report {
    printToStandardError("codec: \(Machine.current().summary)")
    let openssl = BoundRounds(seconds: settings.opensslSeconds)
    openssl.measureRound()

    let sink = Sink()
    let keys = try RNCryptor.Keys.random()
    let passwordKeys = try RNCryptor.PasswordKeys(password: password)
    var cases: [Case] = []
    var workloads: [Workload] = []
    for size in sizes {
      let made = try makeWorkloads(size: size, keys: keys, passwordKeys: passwordKeys, sink: sink)
      cases += made.map(\.case)
      workloads += made.map(\.workload)
    }
    // The first openssl round ran before our runs; the others run between and after them.
    let later = max(settings.opensslRounds - 1, 0)
    let boundsAfterRound = Set((1...max(later, 1)).map { $0 * settings.runs / max(later, 1) }.prefix(later))
    let runs = try Timing.interleavedRuns(
      workloads, runs: settings.runs, secondsPerRun: settings.secondsPerRun,
      progress: { printToStandardError("codec: \($0), \(settings.runs) runs") },
      afterRound: { round in if boundsAfterRound.contains(round) { openssl.measureRound() } }
    ).wall

    let throughput = zip(cases, runs).map { throughputFigure($0, runs: $1, openssl: openssl) }
    let messageRates = try measureMessageRates(
      settings, throughput: throughput, passwordKeys: passwordKeys, sink: sink)
    guard sink.bytes > 0 else { throw BenchError("the timed work produced no bytes") }
    return Report(
      settings: settings, bounds: openssl.bounds, throughput: throughput,
      messageRates: messageRates, targets: targets(throughput: throughput, messageRates: messageRates))
  }

  /// The four workloads of one message size, after checking that their messages round-trip.
  static func makeWorkloads(
    size: (label: String, bytes: Int, opensslBytes: Int), keys: RNCryptor.Keys,
    passwordKeys: RNCryptor.PasswordKeys, sink: Sink
  ) throws -> [(case: Case, workload: Workload)] {
    var generator = SystemRandomNumberGenerator()
    let plaintext = Data((0..<size.bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let keyMessage = try RNCryptor.encrypt(plaintext, keys: keys)
    let passwordMessage = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
    guard try RNCryptor.decrypt(keyMessage, keys: keys) == plaintext,
      try RNCryptor.decrypt(passwordMessage, passwordKeys: passwordKeys) == plaintext,
      try RNCryptor.decrypt(passwordMessage, password: password) == plaintext
    else { throw BenchError("a \(size.label) message did not decrypt to its plaintext") }
    let operations: [(format: String, operation: String, body: () throws -> Int)] = [
      ("key", "encrypt", { try RNCryptor.encrypt(plaintext, keys: keys).count }),
      ("key", "decrypt", { try RNCryptor.decrypt(keyMessage, keys: keys).count }),
      ("password", "encrypt", { try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys).count }),
      ("password", "decrypt", { try RNCryptor.decrypt(passwordMessage, passwordKeys: passwordKeys).count }),
    ]
    return operations.map { item in
      let workload = Workload(name: "\(size.label) \(item.format) \(item.operation)") { count in
        for _ in 0..<count { sink.bytes &+= try item.body() }
      }
      return (Case(size: size, format: item.format, operation: item.operation), workload)
    }
  }

  static func throughputFigure(_ figure: Case, runs: Runs, openssl: BoundRounds) -> Throughput {
    func combined(_ aes: Double?, _ hmac: Double?) -> Double? {
      guard let aes, let hmac else { return nil }
      return 1 / (1 / aes + 1 / hmac)
    }
    let aes = openssl.median(figure.aes, figure.size.opensslBytes)
    let hmac = openssl.median(.hmacSHA256, figure.size.opensslBytes)
    let bound = combined(aes, hmac)
    let megabytes = runs.medianRate * Double(figure.size.bytes) / 1e6
    return Throughput(
      message: figure.size.label, messageBytes: figure.size.bytes, format: figure.format,
      operation: figure.operation, megabytesPerSecond: megabytes, runs: runs,
      opensslBlockBytes: figure.size.opensslBytes, aesMegabytesPerSecond: aes, hmacMegabytesPerSecond: hmac,
      boundMegabytesPerSecond: bound, ratio: bound.map { megabytes / $0 },
      encryptSpeedBoundMegabytesPerSecond: figure.operation == "decrypt"
        ? combined(openssl.median(.aes256CBCEncrypt, figure.size.opensslBytes), hmac) : nil)
  }

  /// 1 KiB password-format messages: keys derived once (rate from the throughput runs above,
  /// latencies timed one by one) and one PBKDF2 pair per message (a small sample).
  static func measureMessageRates(
    _ settings: Settings, throughput: [Throughput], passwordKeys: RNCryptor.PasswordKeys, sink: Sink
  ) throws -> [MessageRate] {
    let plaintext = Data(repeating: 0x5A, count: 1024)
    let message = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
    func runsRate(_ operation: String) -> Double {
      let row = throughput.first { $0.messageBytes == 1024 && $0.format == "password" && $0.operation == operation }
      return row?.runs.medianRate ?? 0
    }
    printToStandardError("codec: 1 KiB password-format latencies, \(settings.latencySamples) messages each")
    let encryptOnce = try Timing.latencies(count: settings.latencySamples) {
      sink.bytes &+= try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys).count
    }
    let decryptOnce = try Timing.latencies(count: settings.latencySamples) {
      sink.bytes &+= try RNCryptor.decrypt(message, passwordKeys: passwordKeys).count
    }
    printToStandardError("codec: one PBKDF2 pair per message, \(settings.pbkdf2Samples) messages each")
    let encryptEach = try Timing.latencies(count: settings.pbkdf2Samples) {
      sink.bytes &+= try RNCryptor.encrypt(plaintext, password: password).count
    }
    let decryptEach = try Timing.latencies(count: settings.pbkdf2Samples) {
      sink.bytes &+= try RNCryptor.decrypt(message, password: password).count
    }
    let eachEncrypt = Latency(samples: encryptEach)
    let eachDecrypt = Latency(samples: decryptEach)
    return [
      MessageRate(
        workload: "encrypt(_:passwordKeys:), keys derived once", messagesPerSecond: runsRate("encrypt"),
        latencySeconds: Latency(samples: encryptOnce)),
      MessageRate(
        workload: "decrypt(_:passwordKeys:), keys derived once", messagesPerSecond: runsRate("decrypt"),
        latencySeconds: Latency(samples: decryptOnce)),
      MessageRate(
        workload: "encrypt(_:password:), PBKDF2 per message", messagesPerSecond: eachEncrypt.ratePerSecond ?? 0,
        latencySeconds: eachEncrypt),
      MessageRate(
        workload: "decrypt(_:password:), PBKDF2 per message", messagesPerSecond: eachDecrypt.ratePerSecond ?? 0,
        latencySeconds: eachDecrypt),
    ]
  }

  static func targets(throughput: [Throughput], messageRates: [MessageRate]) -> [Target] {
    let large = throughput.filter { $0.messageBytes == 1024 * 1024 }.map { row in
      Target(
        "1 MiB \(row.format) \(row.operation) >= 80% of bound", required: 0.8, measured: row.ratio)
    }
    let small = messageRates.prefix(2).map { rate in
      Target(
        "1 KiB \(rate.workload) >= 100,000 msg/s", required: 100_000,
        measured: rate.messagesPerSecond)
    }
    return large + small
  }
}
