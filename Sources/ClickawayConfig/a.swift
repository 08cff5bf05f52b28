import TOMLKit
