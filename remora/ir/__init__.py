"""The array IR between the engines and the backends (see :mod:`remora.ir.core`)."""
