import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A progress line on standard error for long work: a bar, the percentage, the rate and the
/// time left, redrawn ten times a second by a background thread.
///
/// It appears only when standard error is a terminal, and only once the work has taken half a
/// second (`CASK_PROGRESS_DELAY`, in seconds, changes that; 0 draws the first frame at once),
/// so quick commands and pipes never see it. `finish()` erases it.
///
/// The bar never ends the process: a frame that cannot be written (the terminal hung up, and
/// writes fail with `EIO`) stops the bar silently, and the work goes on to its end and its
/// cleanup. (Prevents: the process ending from the bar's thread, leaving `decrypt`'s temporary
/// file of unauthenticated plaintext behind.)
final class ProgressBar: Sendable {
  /// What is being counted.
  enum Unit: Sendable {
    case bytes
    /// Things, named in the plural ("objects").
    case items(String)
    /// Nothing measurable: the line shows a spinner and the time spent.
    case time
  }

  private struct State {
    var finished = false
    var shown = false
    var frame = 0
  }

  private let label: String
  private let total: UInt64?
  private let unit: Unit
  private let sample: @Sendable () -> UInt64
  private let started = ContinuousClock.now
  private let state = Mutex(State())
  private let delay: Duration

  private init(label: String, total: UInt64?, unit: Unit, sample: @escaping @Sendable () -> UInt64) {
    self.label = label
    self.total = total
    self.unit = unit
    self.sample = sample
    delay = Self.delay(ProcessInfo.processInfo.environment["CASK_PROGRESS_DELAY"])
  }

  /// The longest delay: a year, which is never for a command.
  private static let longestDelay: Double = 365 * 24 * 3600

  /// `CASK_PROGRESS_DELAY` in seconds: half a second when unset, not a number, or `nan`;
  /// a negative value is 0, and `inf` or anything beyond a year is a year (no bar).
  static func delay(_ text: String?) -> Duration {
    guard let seconds = text.flatMap(Double.init), !seconds.isNaN else { return .milliseconds(500) }
    return .milliseconds(Int(min(max(0, seconds), longestDelay) * 1000))
  }

  /// Starts a bar that polls `sample` for the amount done so far, out of `total` (`nil` when
  /// unknown: the line then shows the amount, the rate and the time spent).
  ///
  /// - Returns: `nil` when standard error is not a terminal.
  static func start(
    _ label: String, total: UInt64?, unit: Unit = .bytes, sample: @escaping @Sendable () -> UInt64
  ) -> ProgressBar? {
    guard StandardStream.error.isTerminal else { return nil }
    let bar = ProgressBar(label: label, total: total, unit: unit, sample: sample)
    if bar.delay == .zero { bar.draw() }
    let thread = Thread {
      // A signal that ends the process goes to a thread that handles it (`Interruption`'s
      // watcher), never to this one, where its default action would end the process before
      // any cleanup (prevents: Ctrl-C during `cask rekey` taken by this thread).
      Interruption.blockInThisThread()
      bar.loop()
    }
    thread.start()
    return bar
  }

  /// Stops the bar and erases its line. Safe to call more than once.
  func finish() {
    state.withLock { state in
      guard !state.finished else { return }
      state.finished = true
      if state.shown { _ = StandardStream.error.writeIfPossible("\r\u{1B}[K") }
    }
  }

  private func loop() {
    while true {
      Thread.sleep(forTimeInterval: 0.1)
      if !draw() { return }
    }
  }

  /// Draws a frame once the delay has passed; `false` once the bar is finished, or stopped
  /// because the frame could not be written.
  @discardableResult
  private func draw() -> Bool {
    state.withLock { state -> Bool in
      guard !state.finished else { return false }
      let elapsed = ContinuousClock.now - started
      guard elapsed >= delay else { return true }
      state.shown = true
      state.frame += 1
      let frame = "\r" + line(done: sample(), elapsed: elapsed, frame: state.frame) + "\u{1B}[K"
      guard StandardStream.error.writeIfPossible(frame) else {
        // Nothing to erase on a terminal that is gone, and nowhere to say so.
        state.finished = true
        return false
      }
      return true
    }
  }

  /// One frame: `label [=====>     ]  42%  12.3 MiB/s  ETA 0:07`.
  private func line(done: UInt64, elapsed: Duration, frame: Int) -> String {
    let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    let rate = Double(done) / seconds
    let rateText = "\(amount(rate))/s"
    let spinner = Array("|/-\\")[frame % 4]
    if case .time = unit { return "\(label) \(spinner)  \(Self.clock(seconds))" }
    guard let total, total > 0 else {
      return "\(label) \(spinner)  \(amount(Double(done)))  \(rateText)  \(Self.clock(seconds))"
    }
    let fraction = min(1, Double(done) / Double(total))
    let remaining = rate > 0 ? Double(total - min(done, total)) / rate : nil
    let tail =
      String(format: " %3d%%  ", Int(fraction * 100)) + rateText + "  ETA "
      + (remaining.map(Self.clock) ?? "--:--")
    let width = max(10, min(40, Self.terminalWidth - label.count - tail.count - 4))
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "=", count: filled) + (filled < width ? ">" : "")
    return "\(label) [\(bar.padding(toLength: width, withPad: " ", startingAt: 0))]\(tail)"
  }

  private func amount(_ value: Double) -> String {
    switch unit {
    case .bytes: return ByteCount.format(value)
    case .items(let name): return "\(Int(value)) \(name)"
    case .time: return ""
    }
  }

  private static func clock(_ seconds: Double) -> String {
    let whole = Int(seconds.rounded())
    let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
    return hours > 0
      ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
  }

  private static var terminalWidth: Int {
    var size = winsize()
    guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
    return Int(size.ws_col)
  }
}

/// A count shared between the thread doing the work and a progress bar.
final class ProgressCounter: Sendable {
  private let value = Atomic<UInt64>(0)

  func add(_ amount: UInt64) {
    value.add(amount, ordering: .relaxed)
  }

  func set(_ amount: UInt64) {
    value.store(amount, ordering: .relaxed)
  }

  var current: UInt64 { value.load(ordering: .relaxed) }
}
