! npvk_example.f90: the C example (../c/npvk_example.c) in Fortran, calling
! npvk's C ABI through iso_c_binding:
!
!   y = a*x + b
!   f = where(y > 0, sqrt(max(y, 0)) * exp(-k*x), 0)
!
! checked against a Fortran loop. Exit status: 0 on success, 1 on an npvk
! error, a mismatch or a Vulkan validation message, 77 when the device cannot
! run float64 (the code CTest reads as "skipped").
!
! Build: gfortran npvk_example.f90 $(pkg-config --libs npvk)

! Interfaces to the part of npvk.h this example uses. npvk's handles are C
! structs holding one uint64_t; a bind(c) type with one integer(c_int64_t)
! has the same layout and is passed the same way by value. C enums are ints.
module npvk
  use, intrinsic :: iso_c_binding
  implicit none

  integer(c_int), parameter :: NPVK_SUCCESS = 0
  integer(c_int), parameter :: NPVK_BOOL = 0, NPVK_FLOAT64 = 11
  integer(c_int), parameter :: NPVK_OP_ADD = 0, NPVK_OP_MULTIPLY = 2, NPVK_OP_SQRT = 16, &
                               NPVK_OP_EXP = 21, NPVK_OP_GREATER = 76, &
                               NPVK_OP_MAXIMUM = 78, NPVK_OP_WHERE = 83

  type, bind(c) :: npvk_context
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c) :: npvk_buffer
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c) :: npvk_view
    integer(c_int64_t) :: id = 0
  end type

  ! Mirrors struct npvk_device_info field for field (uint8_t flags become
  ! integer(c_int8_t), char arrays character(c_char) arrays).
  type, bind(c) :: npvk_device_info
    integer(c_int32_t) :: struct_size = 0, index = 0
    character(kind=c_char) :: name(256) = c_null_char, driver_name(256) = c_null_char, &
                              driver_info(256) = c_null_char
    integer(c_int32_t) :: type = 0, vendor_id = 0, device_id = 0, api_version = 0
    integer(c_int8_t) :: driver_uuid(16) = 0
    integer(c_int8_t) :: usable = 0, float64 = 0, float16 = 0, int64 = 0, int16 = 0, int8 = 0, &
                         storage8 = 0, storage16 = 0, buffer_device_address = 0, &
                         host_memory_import = 0, timestamps = 0, unified_memory = 0
    integer(c_int32_t) :: max_push_constants_size = 0, max_workgroup_invocations = 0, &
                          max_workgroup_count_x = 0, subgroup_size = 0
    integer(c_int64_t) :: max_memory_allocation_size = 0, &
                          min_imported_host_pointer_alignment = 0, device_local_bytes = 0
    real(c_double) :: timestamp_period_ns = 0
    character(kind=c_char) :: unusable_reason(256) = c_null_char
  end type

  ! Mirrors struct npvk_stats field for field; uint64_t becomes
  ! integer(c_int64_t), which is fine for counters below 2**63.
  type, bind(c) :: npvk_stats
    integer(c_int32_t) :: struct_size = 0, reserved = 0
    integer(c_int64_t) :: ops_recorded = 0, flushes = 0, dispatches = 0, &
                          barriers = 0, kernels_compiled = 0, kernel_cache_hits = 0, &
                          disk_cache_hits = 0, disk_cache_rejects = 0, pipelines_created = 0, &
                          bytes_to_device = 0, bytes_to_host = 0, validation_messages = 0
    real(c_double) :: device_seconds = 0, compile_seconds = 0, flush_seconds = 0
    integer(c_int64_t) :: rows_merged = 0
  end type

  interface
    function npvk_last_error_message() bind(c, name='npvk_last_error_message')
      import :: c_ptr
      type(c_ptr) :: npvk_last_error_message
    end function

    function npvk_status_string(status) bind(c, name='npvk_status_string')
      import :: c_ptr, c_int
      integer(c_int), value :: status
      type(c_ptr) :: npvk_status_string
    end function

    function npvk_context_create(options, ctx) bind(c, name='npvk_context_create')
      import :: c_ptr, c_int, npvk_context
      type(c_ptr), value :: options
      type(npvk_context), intent(out) :: ctx
      integer(c_int) :: npvk_context_create
    end function

    function npvk_context_release(ctx) bind(c, name='npvk_context_release')
      import :: c_int, npvk_context
      type(npvk_context), value :: ctx
      integer(c_int) :: npvk_context_release
    end function

    function npvk_context_device_info(ctx, info) bind(c, name='npvk_context_device_info')
      import :: c_int, npvk_context, npvk_device_info
      type(npvk_context), value :: ctx
      type(npvk_device_info), intent(inout) :: info
      integer(c_int) :: npvk_context_device_info
    end function

    function npvk_context_get_stats(ctx, stats) bind(c, name='npvk_context_get_stats')
      import :: c_int, npvk_context, npvk_stats
      type(npvk_context), value :: ctx
      type(npvk_stats), intent(inout) :: stats
      integer(c_int) :: npvk_context_get_stats
    end function

    function npvk_op_supported(ctx, op, dtypes, count, supported) &
        bind(c, name='npvk_op_supported')
      import :: c_int, c_int32_t, npvk_context
      type(npvk_context), value :: ctx
      integer(c_int), value :: op
      integer(c_int), intent(in) :: dtypes(*)
      integer(c_int32_t), value :: count
      integer(c_int), intent(out) :: supported
      integer(c_int) :: npvk_op_supported
    end function

    function npvk_buffer_create(ctx, size, buf) bind(c, name='npvk_buffer_create')
      import :: c_int, c_int64_t, npvk_context, npvk_buffer
      type(npvk_context), value :: ctx
      integer(c_int64_t), value :: size
      type(npvk_buffer), intent(out) :: buf
      integer(c_int) :: npvk_buffer_create
    end function

    ! `src` and `dst` are void* in C: any contiguous array passed by reference.
    function npvk_buffer_write(buf, offset, src, size) bind(c, name='npvk_buffer_write')
      import :: c_int, c_int64_t, c_double, npvk_buffer
      type(npvk_buffer), value :: buf
      integer(c_int64_t), value :: offset, size
      real(c_double), intent(in) :: src(*)
      integer(c_int) :: npvk_buffer_write
    end function

    function npvk_buffer_read(buf, offset, dst, size) bind(c, name='npvk_buffer_read')
      import :: c_int, c_int64_t, c_double, npvk_buffer
      type(npvk_buffer), value :: buf
      integer(c_int64_t), value :: offset, size
      real(c_double), intent(out) :: dst(*)
      integer(c_int) :: npvk_buffer_read
    end function

    ! `strides` is a pointer so that c_null_ptr can ask for C-contiguous.
    function npvk_view_create(buf, offset, dtype, ndim, shape, strides, view) &
        bind(c, name='npvk_view_create')
      import :: c_int, c_int32_t, c_int64_t, c_ptr, npvk_buffer, npvk_view
      type(npvk_buffer), value :: buf
      integer(c_int64_t), value :: offset
      integer(c_int), value :: dtype
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      type(c_ptr), value :: strides
      type(npvk_view), intent(out) :: view
      integer(c_int) :: npvk_view_create
    end function

    ! Declared for float64 scalars, the only ones this example makes.
    function npvk_view_create_scalar(ctx, dtype, value, view) &
        bind(c, name='npvk_view_create_scalar')
      import :: c_int, c_double, npvk_context, npvk_view
      type(npvk_context), value :: ctx
      integer(c_int), value :: dtype
      real(c_double), intent(in) :: value
      type(npvk_view), intent(out) :: view
      integer(c_int) :: npvk_view_create_scalar
    end function

    function npvk_apply(ctx, op, nin, inputs, nout, outputs) bind(c, name='npvk_apply')
      import :: c_int, c_int32_t, npvk_context, npvk_view
      type(npvk_context), value :: ctx
      integer(c_int), value :: op
      integer(c_int32_t), value :: nin, nout
      type(npvk_view), intent(in) :: inputs(*), outputs(*)
      integer(c_int) :: npvk_apply
    end function

    function npvk_unary(ctx, op, a, out) bind(c, name='npvk_unary')
      import :: c_int, npvk_context, npvk_view
      type(npvk_context), value :: ctx
      integer(c_int), value :: op
      type(npvk_view), value :: a, out
      integer(c_int) :: npvk_unary
    end function

    function npvk_binary(ctx, op, a, b, out) bind(c, name='npvk_binary')
      import :: c_int, npvk_context, npvk_view
      type(npvk_context), value :: ctx
      integer(c_int), value :: op
      type(npvk_view), value :: a, b, out
      integer(c_int) :: npvk_binary
    end function

    function c_strlen(s) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
  end interface

contains

  ! A fixed-size, NUL-terminated C char array as a Fortran string.
  function c_chars(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! A C string owned by npvk, copied into a Fortran string.
  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! Stops the program with the npvk error message when `status` is a failure.
  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= NPVK_SUCCESS) then
      write (0, '(5a)') 'npvk_example: ', what, ' failed: ', &
        c_string(npvk_status_string(status)), ': ' // c_string(npvk_last_error_message())
      call exit_with(1)
    end if
  end subroutine

  ! STOP n prints "STOP n" on gfortran; exit() sets the status quietly.
  subroutine exit_with(code)
    integer, intent(in) :: code
    interface
      subroutine c_exit(status) bind(c, name='exit')
        import :: c_int
        integer(c_int), value :: status
      end subroutine
    end interface
    call c_exit(int(code, c_int))
  end subroutine
end module npvk

program npvk_example
  use npvk
  implicit none
  integer, parameter :: n = 1000
  real(c_double), parameter :: a = 2.0_c_double, b = 1.0_c_double, k = 0.25_c_double
  real(c_double) :: x(n), f(n), want, err, max_error, total
  integer(c_int64_t), parameter :: bytes = n * c_sizeof(0.0_c_double)
  integer(c_int32_t), parameter :: one = 1
  integer(c_int), parameter :: sqrt_f64(2) = [NPVK_FLOAT64, NPVK_FLOAT64]  ! input, output
  integer(c_int64_t) :: shape(1)
  type(npvk_context) :: ctx
  type(npvk_buffer) :: xb, yb, eb, mb
  type(npvk_view) :: xv, yv, ev, mv, av, bv, minus_k, zero
  type(npvk_device_info) :: device
  type(npvk_stats) :: stats
  integer(c_int) :: have_f64
  integer :: i, bad

  do i = 1, n
    x(i) = -5.0_c_double + 10.0_c_double * (i - 1) / (n - 1)
  end do
  shape(1) = n

  ! No options: the device comes from NPVK_DEVICE or npvk's default choice,
  ! and validation from NPVK_VALIDATION.
  call check(npvk_context_create(c_null_ptr, ctx), 'npvk_context_create')

  device%struct_size = int(c_sizeof(device), c_int32_t)
  call check(npvk_context_device_info(ctx, device), 'npvk_context_device_info')
  ! Some GPUs have no float64 at all; ask instead of failing in npvk_apply.
  call check(npvk_op_supported(ctx, NPVK_OP_SQRT, sqrt_f64, 2_c_int32_t, have_f64), &
             'npvk_op_supported')
  if (have_f64 == 0) then
    print '(3a)', 'npvk_example (Fortran): skipped: ', c_chars(device%name), ' has no float64'
    call check(npvk_context_release(ctx), 'npvk_context_release')
    call exit_with(77)
  end if

  call check(npvk_buffer_create(ctx, bytes, xb), 'npvk_buffer_create')
  call check(npvk_buffer_create(ctx, bytes, yb), 'npvk_buffer_create')
  call check(npvk_buffer_create(ctx, bytes, eb), 'npvk_buffer_create')
  call check(npvk_buffer_create(ctx, int(n, c_int64_t), mb), 'npvk_buffer_create') ! bool: 1 byte
  call check(npvk_buffer_write(xb, 0_c_int64_t, x, bytes), 'npvk_buffer_write')

  call check(npvk_view_create(xb, 0_c_int64_t, NPVK_FLOAT64, one, shape, c_null_ptr, xv), 'view x')
  call check(npvk_view_create(yb, 0_c_int64_t, NPVK_FLOAT64, one, shape, c_null_ptr, yv), 'view y')
  call check(npvk_view_create(eb, 0_c_int64_t, NPVK_FLOAT64, one, shape, c_null_ptr, ev), 'view e')
  call check(npvk_view_create(mb, 0_c_int64_t, NPVK_BOOL, one, shape, c_null_ptr, mv), 'view m')
  ! Scalars broadcast like NumPy scalars and need no buffer.
  call check(npvk_view_create_scalar(ctx, NPVK_FLOAT64, a, av), 'scalar a')
  call check(npvk_view_create_scalar(ctx, NPVK_FLOAT64, b, bv), 'scalar b')
  call check(npvk_view_create_scalar(ctx, NPVK_FLOAT64, -k, minus_k), 'scalar -k')
  call check(npvk_view_create_scalar(ctx, NPVK_FLOAT64, 0.0_c_double, zero), 'scalar 0')

  ! Recording is lazy: nothing runs on the device until npvk_buffer_read. In
  ! place (an output that is exactly an input) saves buffers.
  call check(npvk_binary(ctx, NPVK_OP_MULTIPLY, xv, av, yv), 'y = a*x')
  call check(npvk_binary(ctx, NPVK_OP_ADD, yv, bv, yv), 'y += b')
  call check(npvk_binary(ctx, NPVK_OP_GREATER, yv, zero, mv), 'm = y > 0')
  call check(npvk_binary(ctx, NPVK_OP_MAXIMUM, yv, zero, yv), 'y = max(y, 0)')
  call check(npvk_unary(ctx, NPVK_OP_SQRT, yv, yv), 'y = sqrt(y)')
  call check(npvk_binary(ctx, NPVK_OP_MULTIPLY, xv, minus_k, ev), 'e = -k*x')
  call check(npvk_unary(ctx, NPVK_OP_EXP, ev, ev), 'e = exp(e)')
  call check(npvk_binary(ctx, NPVK_OP_MULTIPLY, yv, ev, yv), 'y *= e')
  call check(npvk_apply(ctx, NPVK_OP_WHERE, 3_c_int32_t, [mv, yv, zero], one, [ev]), &
             'e = where(m, y, 0)')
  call check(npvk_buffer_read(eb, 0_c_int64_t, f, bytes), 'npvk_buffer_read')

  ! exp is within 1 ULP of glibc's (docs/ops.md) and compilers may fuse a*x + b,
  ! so compare with a tolerance instead of bit for bit.
  bad = 0
  max_error = 0
  total = 0
  do i = 1, n
    if (a * x(i) + b > 0) then
      want = sqrt(max(a * x(i) + b, 0.0_c_double)) * exp(-k * x(i))
    else
      want = 0
    end if
    err = abs(f(i) - want)
    if (.not. (err <= 1e-13_c_double * max(1.0_c_double, abs(want)))) then
      bad = bad + 1
      if (bad <= 5) write (0, '(a,es25.17,a,es25.17,a,es25.17)') &
        'mismatch at x=', x(i), ': npvk ', f(i), ', Fortran ', want
    end if
    max_error = max(max_error, err)
    total = total + f(i)
  end do

  stats%struct_size = int(c_sizeof(stats), c_int32_t)
  call check(npvk_context_get_stats(ctx, stats), 'npvk_context_get_stats')
  ! Releasing the context releases its buffers and views too.
  call check(npvk_context_release(ctx), 'npvk_context_release')

  print '(a,i0,3a,f0.12,a,es9.3,a,i0,2a)', 'npvk_example (Fortran): ', n, ' points on ', &
    c_chars(device%name), ': sum ', total, ', max |error| ', max_error, ', ', &
    stats%dispatches, ' dispatches, ', &
    trim(merge('MISMATCH', 'ok      ', bad > 0))
  if (stats%validation_messages /= 0) then
    write (0, '(a,i0,a)') 'npvk_example: ', stats%validation_messages, &
      ' Vulkan validation messages'
    call exit_with(1)
  end if
  if (bad > 0) then
    write (0, '(a,i0,a,i0,a)') 'npvk_example: ', bad, ' of ', n, ' points differ from the loop'
    call exit_with(1)
  end if
end program
