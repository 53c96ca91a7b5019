//! The bounds every input runs under: memory (a counting global allocator that ends the process
//! when one input makes the heap grow past its budget) and the input being run, kept where the
//! allocator and the hang watchdog can save it without allocating.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The system allocator, counting the bytes live.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Whether an input is running (the budget only applies then).
static ARMED: AtomicBool = AtomicBool::new(false);
/// The live bytes allowed while an input runs.
static BUDGET: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The input running now, and the file it is saved to if it breaks a bound.
static CURRENT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static SAVE_TO: OnceLock<CString> = OnceLock::new();

/// Exit code when an input exceeds the memory budget.
pub const EXIT_MEMORY: i32 = 4;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            charge(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn charge(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed).saturating_add(size);
    if ARMED.load(Ordering::Relaxed) && live > BUDGET.load(Ordering::Relaxed) {
        over_budget(size);
    }
}

/// Saves the running input and ends the process, all without allocating: the allocator cannot
/// unwind, and the heap is what went wrong.
#[cold]
fn over_budget(size: usize) -> ! {
    ARMED.store(false, Ordering::Relaxed);
    let say = |text: &[u8]| {
        // SAFETY: writing a valid buffer to stderr.
        unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
    };
    say(b"\nfslab-fuzz: an input made the heap grow past its budget (an allocation of ");
    let mut digits = [0u8; 20];
    let mut n = size;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    say(&digits[i..]);
    say(b" bytes)\n");
    if let (Some(path), Ok(input)) = (SAVE_TO.get(), CURRENT.try_lock()) {
        // SAFETY: a valid C string and buffer; the descriptor is closed before exiting.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
            if fd >= 0 {
                libc::write(fd, input.as_ptr().cast(), input.len());
                libc::close(fd);
                say(b"fslab-fuzz: the input is saved in ");
                say(path.as_bytes());
                say(b"\n");
            }
        }
    }
    // SAFETY: ends the process at once, running nothing that could allocate.
    unsafe { libc::_exit(EXIT_MEMORY) }
}

/// The live bytes an input may use on top of what was live before it, and where an input that
/// exceeds it is saved.
pub fn set_budget(bytes: usize, save_to: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    BUDGET.store(bytes, Ordering::Relaxed);
    let _ = SAVE_TO.set(CString::new(save_to.as_os_str().as_bytes()).expect("a path without NUL"));
}

/// Runs `f` with the memory budget on, `input` kept where a bound's breach can save it.
pub fn armed<R>(input: &[u8], f: impl FnOnce() -> R) -> R {
    {
        let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
        current.clear();
        current.extend_from_slice(input);
    }
    let base = LIVE.load(Ordering::Relaxed);
    let budget = BUDGET.load(Ordering::Relaxed);
    let saved = budget;
    // The budget counts from what is live now.
    BUDGET.store(base.saturating_add(budget), Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    let r = f();
    ARMED.store(false, Ordering::Relaxed);
    BUDGET.store(saved, Ordering::Relaxed);
    r
}
