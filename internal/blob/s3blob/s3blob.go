// Package s3blob is the blob.Store of S3-protocol servers (AWS S3, MinIO,
// moto, ...), on aws-sdk-go-v2. It is apart from package blob so that code
// that only reads and writes through a blob.Store (tasks, activities,
// workflows) does not link the AWS SDK; the commands, the dev stack and the
// integration tests open stores here.
package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/secret"
)

// Config says where a bucket is and how to reach it. Zero values mean the
// AWS defaults: the default credential chain, the region from the
// environment, virtual-hosted addressing.
type Config struct {
	Endpoint  string `yaml:"endpoint"`   // e.g. http://127.0.0.1:9000 for MinIO; empty for AWS
	Region    string `yaml:"region"`     // default us-east-1 when unset everywhere
	Bucket    string `yaml:"bucket"`     // required
	Prefix    string `yaml:"prefix"`     // optional key prefix inside the bucket
	PathStyle bool   `yaml:"path_style"` // true for most S3-compatible servers
	// Static credentials; when empty the AWS default chain is used.
	AccessKeyID     string       `yaml:"access_key_id"`
	SecretAccessKey secret.Value `yaml:"secret_access_key"`
	// PartSize is the multipart part size in bytes (default 8 MiB).
	PartSize int64 `yaml:"part_size"`
	// SignPayload makes every request sign its body's SHA-256 (SigV4's
	// signed payload). Unset, a body is signed only when it travels
	// unencrypted to another host: over TLS (https) or to a loopback
	// address, where nothing on the way can change it, requests are sent
	// as UNSIGNED-PAYLOAD, so neither the client nor the server hashes
	// every byte (payloadSigned).
	SignPayload bool `yaml:"sign_payload"`
	// Deadlines of every request (zero: the defaults below): connecting
	// (TCP and TLS handshake each), waiting for the response's headers
	// once the request is sent, and a connection delivering no byte
	// while a response is read. A request that misses one fails and is
	// retried at most MaxAttempts times in all (default 2), so a silent
	// server fails an operation in about MaxAttempts×ResponseTimeout.
	ConnectTimeout  time.Duration `yaml:"connect_timeout"`
	ResponseTimeout time.Duration `yaml:"response_timeout"`
	IdleTimeout     time.Duration `yaml:"idle_timeout"`
	MaxAttempts     int           `yaml:"max_attempts"`
}

// Default deadlines (Config).
const (
	DefaultConnectTimeout  = 5 * time.Second
	DefaultResponseTimeout = 12 * time.Second
	DefaultIdleTimeout     = 30 * time.Second
	DefaultMaxAttempts     = 2
)

// withDefaults fills the zero deadlines.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = DefaultResponseTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	return c
}

// payloadSigned reports whether cfg's requests sign their bodies'
// SHA-256: when SignPayload says so, or when the endpoint is plain http to
// a host that is not a loopback address (AWS, the empty endpoint, is
// https).
func payloadSigned(cfg Config) bool {
	if cfg.SignPayload {
		return true
	}
	if cfg.Endpoint == "" {
		return false
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return true
	}
	if u.Scheme == "https" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// httpClient is the client of every request to the server, with cfg's
// deadlines: connect and TLS handshake, response headers, and an idle
// read deadline renewed on every read (the SDK's read timeout).
func httpClient(cfg Config) aws.HTTPClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = cfg.ConnectTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = cfg.ConnectTimeout
			t.ResponseHeaderTimeout = cfg.ResponseTimeout
			t.ExpectContinueTimeout = time.Second
		}).
		WithReadTimeout(cfg.IdleTimeout)
}

// Store is a blob.Store backed by one bucket (and optional prefix) of an
// S3-protocol server.
type Store struct {
	client *s3.Client
	// manager.Uploader is deprecated in favour of feature/s3/transfermanager,
	// which is still v0.x; we move when it reaches v1.
	uploader *manager.Uploader //lint:ignore SA1019 see above
	bucket   string
	prefix   string
	where    string // the endpoint and bucket, for errors
}

var _ blob.Store = (*Store)(nil)
var _ blob.RangeGetter = (*Store)(nil)

// New returns a Store for cfg. It does not contact the server.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3blob: s3: bucket is required")
	}
	cfg = cfg.withDefaults()
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(httpClient(cfg)),
		awsconfig.WithRetryMaxAttempts(cfg.MaxAttempts),
	}
	region := cfg.Region
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey.Reveal(), "")))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3blob: s3: load aws config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// S3-compatible servers differ in their support for the newer
		// default checksums; only send them when the operation requires it.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if !payloadSigned(cfg) {
			o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
		}
	})
	partSize := cfg.PartSize
	if partSize <= 0 {
		partSize = 8 << 20
	}
	//lint:ignore SA1019 manager until transfermanager reaches v1 (see Store.uploader)
	up := manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = partSize
		u.Concurrency = 2
	})
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "AWS S3 (" + awsCfg.Region + ")"
	}
	return &Store{client: client, uploader: up, bucket: cfg.Bucket, prefix: strings.Trim(cfg.Prefix, "/"),
		where: fmt.Sprintf("s3 %s bucket %s", endpoint, cfg.Bucket)}, nil
}

// Client returns the underlying S3 client (for set-up such as bucket creation).
func (s *Store) Client() *s3.Client { return s.client }

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// EnsureBucket creates the bucket if it does not exist.
func (s *Store) EnsureBucket(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	if err == nil {
		return nil
	}
	_, err = s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &s.bucket})
	var owned *types.BucketAlreadyOwnedByYou
	var exists *types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) {
		return fmt.Errorf("s3blob: create bucket %s: %w", s.bucket, err)
	}
	return nil
}

func (s *Store) full(key string) string {
	if s.prefix == "" {
		return key
	}
	// Not path.Join: it would drop a trailing slash, and "p/" must not match "pp".
	return s.prefix + "/" + strings.TrimPrefix(key, "/")
}

func (s *Store) rel(full string) string {
	if s.prefix == "" {
		return full
	}
	return strings.TrimPrefix(full, s.prefix+"/")
}

// Put implements Store. Bodies of unknown or large size go up in parts.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	k := s.full(key)
	if size >= 0 && size <= s.uploader.PartSize {
		body, n, err := seekable(r, size)
		if err != nil {
			return fmt.Errorf("s3blob: put %s: read body: %w", key, err)
		}
		_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &k, Body: body, ContentLength: aws.Int64(n)})
		if err != nil {
			return s.wrap("put", key, err)
		}
		return nil
	}
	//lint:ignore SA1019 manager until transfermanager reaches v1 (see Store.uploader)
	if _, err := s.uploader.Upload(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &k, Body: r}); err != nil {
		return s.wrap("put", key, err)
	}
	return nil
}

// seekable returns r as the seekable body PutObject needs (it hashes the
// body for the signature, then sends it), and its length: r itself when it
// is an in-memory reader of size bytes (bytes.Reader, strings.Reader, as
// most callers pass), else r read into memory.
func seekable(r io.Reader, size int64) (io.ReadSeeker, int64, error) {
	switch rs := r.(type) {
	case *bytes.Reader:
		if size >= 0 && int64(rs.Len()) == size {
			return rs, size, nil
		}
	case *strings.Reader:
		if size >= 0 && int64(rs.Len()) == size {
			return rs, size, nil
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(b), int64(len(b)), nil
}

// PutIfAbsent implements Store with a conditional write (If-None-Match: *).
func (s *Store) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	k := s.full(key)
	body, n, err := seekable(r, size)
	if err != nil {
		return fmt.Errorf("s3blob: put %s: read body: %w", key, err)
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &k, Body: body,
		ContentLength: aws.Int64(n), IfNoneMatch: aws.String("*")})
	if err != nil {
		if code := httpStatus(err); code == http.StatusPreconditionFailed || code == http.StatusConflict {
			return fmt.Errorf("s3blob: put %s: %w", key, blob.ErrExists)
		}
		return s.wrap("put", key, err)
	}
	return nil
}

// Get implements Store.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	k := s.full(key)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return nil, s.wrap("get", key, err)
	}
	return out.Body, nil
}

// GetRange implements RangeGetter.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	k := s.full(key)
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &k, Range: &rng})
	if err != nil {
		return nil, s.wrap("get range", key, err)
	}
	return out.Body, nil
}

// Head implements Store.
func (s *Store) Head(ctx context.Context, key string) (blob.Info, error) {
	k := s.full(key)
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return blob.Info{}, s.wrap("head", key, err)
	}
	return blob.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: strings.Trim(aws.ToString(out.ETag), `"`), Modified: aws.ToTime(out.LastModified)}, nil
}

// List implements Store.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	p := s.full(prefix)
	if prefix == "" && s.prefix != "" {
		p = s.prefix + "/"
	}
	var out []blob.Info
	pg := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &p})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, s.wrap("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, blob.Info{Key: s.rel(aws.ToString(o.Key)), Size: aws.ToInt64(o.Size), ETag: strings.Trim(aws.ToString(o.ETag), `"`), Modified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// AbortUploads implements blob.UploadAborter: it aborts every unfinished
// multipart upload of a key starting with prefix.
func (s *Store) AbortUploads(ctx context.Context, prefix string) (int, error) {
	p := s.full(prefix)
	n := 0
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: &p}
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return n, s.wrap("list uploads", prefix, err)
		}
		for _, u := range out.Uploads {
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: u.Key, UploadId: u.UploadId})
			if err != nil && !errors.Is(Classify(err), blob.ErrNotFound) {
				return n, s.wrap("abort upload", s.rel(aws.ToString(u.Key)), err)
			}
			n++
		}
		if !aws.ToBool(out.IsTruncated) {
			return n, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// Delete implements Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	k := s.full(key)
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &k}); err != nil {
		if err := s.wrap("delete", key, err); !errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrNoBucket) {
			return err
		}
		return nil
	}
	return nil
}

func (s *Store) wrap(op, key string, err error) error {
	if class := Classify(err); class != nil {
		if errors.Is(class, blob.ErrNotFound) {
			return fmt.Errorf("s3blob: %s %s: %w", op, key, blob.ErrNotFound)
		}
		return fmt.Errorf("s3blob: %s %s (%s): %w: %w", op, key, s.where, class, err)
	}
	return fmt.Errorf("s3blob: %s %s (%s): %w", op, key, s.where, err)
}

// Classify returns the class of an S3 operation's error, a sentinel of
// package blob, or nil for a failure that may pass (a 5xx, a time-out, a
// refused connection): blob.ErrNotFound for a missing key, blob.ErrNoBucket
// for a missing bucket, blob.ErrDenied for refused or missing credentials
// (401, 403, a bad signature or key id, no credentials at all), and
// blob.ErrInvalid for a request the server calls malformed (a 400 such as
// an invalid key name), and blob.ErrFull for a write refused because the
// store is full or over a quota (MinIO's 507 XMinioStorageFull and
// XMinioAdminBucketQuotaExceeded, Ceph's QuotaExceeded, any 507; AWS S3
// itself has no such error). The table test in s3blob_test.go maps every
// code.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var se *v4.SigningError
	if errors.As(err, &se) {
		return blob.ErrDenied
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	status := 0
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return classifyCode(status, code)
}

// classifyCode is Classify's table: the S3 error code first, then the
// HTTP status.
func classifyCode(status int, code string) error {
	switch code {
	case "XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "QuotaExceeded":
		return blob.ErrFull
	case "NoSuchBucket":
		return blob.ErrNoBucket
	case "NoSuchKey", "NotFound", "NoSuchUpload":
		return blob.ErrNotFound
	case "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken", "InvalidToken",
		"TokenRefreshRequired", "AllAccessDisabled", "AccountProblem", "AuthorizationHeaderMalformed",
		"MissingSecurityHeader", "InvalidSecurity", "RequestTimeTooSkewed":
		return blob.ErrDenied
	case "InvalidBucketName", "KeyTooLongError", "InvalidArgument", "InvalidRequest", "InvalidObjectName",
		"XMinioInvalidObjectName", "InvalidURI", "MalformedXML", "EntityTooLarge", "EntityTooSmall", "InvalidPart", "InvalidPartOrder":
		return blob.ErrInvalid
	case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "XMinioServerNotInitialized", "OperationAborted":
		return nil
	}
	switch {
	case status == http.StatusInsufficientStorage:
		return blob.ErrFull
	case status == http.StatusNotFound:
		return blob.ErrNotFound
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return blob.ErrDenied
	case status == http.StatusBadRequest:
		return blob.ErrInvalid
	}
	return nil
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed":
			return http.StatusPreconditionFailed
		case "ConditionalRequestConflict":
			return http.StatusConflict
		case "NoSuchKey", "NotFound":
			return http.StatusNotFound
		}
	}
	return 0
}

// MaxPresignExpiry is the longest a presigned link lives (SigV4's own limit).
const MaxPresignExpiry = 7 * 24 * time.Hour

// Presign returns a link that GETs key without credentials until expires
// from now (at most MaxPresignExpiry). It signs locally: the object is not
// checked, and the link carries the signature, never the secret key.
func (s *Store) Presign(ctx context.Context, key string, expires time.Duration) (string, error) {
	if expires <= 0 || expires > MaxPresignExpiry {
		return "", fmt.Errorf("s3blob: presign %s: expiry %s: want more than 0 and at most %s", key, expires, MaxPresignExpiry)
	}
	k := s.full(key)
	req, err := s3.NewPresignClient(s.client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &k},
		s3.WithPresignExpires(expires))
	if err != nil {
		return "", s.wrap("presign", key, err)
	}
	return req.URL, nil
}
