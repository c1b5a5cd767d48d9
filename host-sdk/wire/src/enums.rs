//! A macro for the small closed enums of the wire formats: each gets its
//! numeric value, a `parse` that names the field on an unknown value, the
//! list of all values (for the SystemVerilog generator and tests), and an
//! upper-snake name.

/// Define a `#[repr($t)]` wire enum.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $t:ty as $field:literal {
            $( $(#[$vmeta:meta])* $var:ident = $val:literal => $sv:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr($t)]
        pub enum $name {
            $( $(#[$vmeta])* $var = $val, )+
        }

        impl $name {
            /// Every defined value, in declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$var, )+ ];

            /// Decode a raw value; an unknown one is an error naming the field.
            pub const fn parse(v: $t) -> $crate::Result<Self> {
                match v {
                    $( $val => Ok($name::$var), )+
                    other => Err($crate::Error::new($field, $crate::ErrorKind::Unknown(other as u64))),
                }
            }

            /// The raw value.
            pub const fn raw(self) -> $t {
                self as $t
            }

            /// Upper-snake name used in generated HDL and logs.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$var => $sv, )+
                }
            }
        }

        impl TryFrom<$t> for $name {
            type Error = $crate::Error;
            fn try_from(v: $t) -> $crate::Result<Self> {
                Self::parse(v)
            }
        }
    };
}

pub(crate) use wire_enum;
